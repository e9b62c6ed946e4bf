import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs, IEnvironmentInspector } from '../tokens';

/**
 * Adds the commands that ask about the inspected kernel's environment again:
 * Refresh (the server's environments and the kernel's probe) and Deep Check
 * (the kernel imports torch to tell whether CUDA is usable). Each needs a
 * kernel, Deep Check one that can be probed; their state follows the
 * inspector. In the palette (`isPalette`) their labels name what they
 * refresh or check.
 */
export function addInspectorCommands(
  commands: CommandRegistry,
  inspector: IEnvironmentInspector,
  trans: TranslationBundle
): void {
  const hasKernel = () => !!inspector.target?.sessionContext.session?.kernel;
  commands.addCommand(CommandIDs.refreshEnvironment, {
    label: inPalette(
      trans.__('Refresh Kernel Environment'),
      trans.__('Refresh')
    ),
    caption: trans.__(
      'Ask the server and the kernel about its environment again'
    ),
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: hasKernel,
    execute: async () => {
      await Promise.all([
        inspector.environments.load(true),
        inspector.refresh()
      ]);
    }
  });
  commands.addCommand(CommandIDs.deepCheck, {
    label: inPalette(
      trans.__('Deep Check of the Kernel Environment'),
      trans.__('Deep Check')
    ),
    caption: trans.__(
      'Import torch in this kernel to ask it whether CUDA is usable, which GPUs it sees and its cuDNN: torch stays imported, and on a machine with GPUs asking initialises CUDA in the kernel'
    ),
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: () => hasKernel() && inspector.phase !== 'no-probe',
    execute: () => inspector.refresh({ deep: true })
  });
  inspector.changed.connect(() => {
    commands.notifyCommandChanged(CommandIDs.refreshEnvironment);
    commands.notifyCommandChanged(CommandIDs.deepCheck);
  });
}

/**
 * A label that names what the command acts on in the palette, where it
 * stands alone, and is short on the panel's button.
 */
function inPalette(
  palette: string,
  button: string
): (args: ReadonlyPartialJSONObject) => string {
  return args => (args.isPalette ? palette : button);
}
