import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { CommandRegistry } from '@lumino/commands';

import { diceIcon } from '../icons';
import type { IReproducibilityContext } from './reproducibilityActions';
import { CommandIDs, IEnvironmentInspector } from '../tokens';

/**
 * Adds the reproducibility commands: insert the seed cell, record (or
 * update) the environment fingerprint in the notebook, export
 * environment.yml next to it. The last two act on the notebook the inspector
 * follows, when it has a kernel; what they do loads at the first of them.
 * Their state follows the inspector and the current notebook.
 */
export function addReproducibilityCommands(
  commands: CommandRegistry,
  notebooks: INotebookTracker,
  inspector: IEnvironmentInspector,
  context: IReproducibilityContext
): void {
  const { trans } = context;
  const actions = () => import('./reproducibilityActions');

  /**
   * The current notebook, when the inspector follows it.
   */
  const inspected = (): NotebookPanel | null => {
    const panel = notebooks.currentWidget;
    return panel && inspector.target?.sessionContext === panel.sessionContext
      ? panel
      : null;
  };
  /**
   * A command's state and action on the current notebook, when the inspector
   * follows it and it has a kernel.
   */
  const onInspectedKernel = (
    run: (panel: NotebookPanel) => Promise<void>
  ): Pick<CommandRegistry.ICommandOptions, 'isEnabled' | 'execute'> => {
    const withKernel = () => {
      const panel = inspected();
      return panel?.sessionContext.session?.kernel ? panel : null;
    };
    return {
      isEnabled: () => withKernel() !== null,
      execute: async () => {
        const panel = withKernel();
        if (panel) {
          await run(panel);
        }
      }
    };
  };

  commands.addCommand(CommandIDs.insertReproducibilityCell, {
    label: trans.__('Insert Reproducibility Cell'),
    caption: trans.__(
      'Insert a reproducibility cell at the top: seeds and deterministic switches for the frameworks the kernel has (again: replaces it)'
    ),
    icon: args => (args.isPalette ? undefined : diceIcon),
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: () => notebooks.currentWidget !== null,
    execute: async () => {
      const panel = notebooks.currentWidget;
      if (!panel) {
        return;
      }
      const { insertSeedCell } = await actions();
      // What the inspector knows is of this notebook's kernel only while it
      // follows this notebook (not, say, a console focused since).
      await insertSeedCell(panel, inspected() === panel, context);
    }
  });

  commands.addCommand(CommandIDs.recordEnvironment, {
    // In the palette, among every extension's commands, it says what of what
    // it records.
    label: args => {
      const update = inspected() && inspector.fingerprint;
      if (args.isPalette) {
        return update
          ? trans.__("Update the Notebook's Environment Fingerprint")
          : trans.__('Record the Kernel Environment in the Notebook');
      }
      return update
        ? trans.__('Update Fingerprint')
        : trans.__('Record Environment');
    },
    caption: trans.__(
      "Save the kernel's environment (environment, Python, key packages, PyTorch build, driver and GPUs) in the notebook's metadata, to check later kernels against"
    ),
    describedBy: { args: { type: 'object', properties: {} } },
    ...onInspectedKernel(async panel => {
      const { recordEnvironment } = await actions();
      await recordEnvironment(panel, context);
    })
  });

  commands.addCommand(CommandIDs.exportEnvironmentFile, {
    label: trans.__('Export environment.yml'),
    caption: trans.__(
      "Write the kernel environment's environment.yml into the notebook's folder"
    ),
    describedBy: { args: { type: 'object', properties: {} } },
    ...onInspectedKernel(async panel => {
      const { exportEnvironmentFile } = await actions();
      await exportEnvironmentFile(panel, context);
    })
  });

  const refresh = () => {
    commands.notifyCommandChanged(CommandIDs.recordEnvironment);
    commands.notifyCommandChanged(CommandIDs.exportEnvironmentFile);
    commands.notifyCommandChanged(CommandIDs.insertReproducibilityCell);
  };
  inspector.changed.connect(refresh);
  notebooks.currentChanged.connect(refresh);
}
