import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The panel's tab is in the sidebar from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { EnvironmentPanel } from '../components/EnvironmentPanel';
import { environmentIcon } from '../icons';
import {
  CommandIDs,
  IEnvironmentInspector,
  IGpuMonitorModel,
  TRANSLATION_DOMAIN
} from '../tokens';

/**
 * Adds the Environment side panel and the commands that open it, refresh
 * it and run a deep check.
 */
export const environmentPanelPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:environment-panel',
  description:
    "Adds the Environment side panel: the current kernel's environment at a glance, findings with a fix to copy, the notebook's fingerprint, and the server's conda environments with their packages and environment.yml.",
  autoStart: true,
  requires: [IEnvironmentInspector],
  optional: [IGpuMonitorModel, ILayoutRestorer, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    inspector: IEnvironmentInspector,
    gpuModel: IGpuMonitorModel | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const panel = new EnvironmentPanel({
      inspector,
      gpuModel,
      commands: app.commands,
      translator
    });
    app.shell.add(panel, 'left', { rank: 710 });
    restorer?.add(panel, 'jupyterlab-gpu-monitor-environment');

    const hasKernel = () => !!inspector.target?.sessionContext.session?.kernel;
    app.commands.addCommand(CommandIDs.openEnvironmentPanel, {
      label: trans.__('Kernel Environment'),
      caption: trans.__(
        "Show the Environment side panel: the kernel's environment, what is wrong with it and how to fix it"
      ),
      icon: args => (args.isPalette ? undefined : environmentIcon),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => {
        app.shell.activateById(panel.id);
      }
    });
    app.commands.addCommand(CommandIDs.refreshEnvironment, {
      label: args =>
        args.isPalette
          ? trans.__('Refresh Kernel Environment')
          : trans.__('Refresh'),
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
    app.commands.addCommand(CommandIDs.deepCheck, {
      label: args =>
        args.isPalette
          ? trans.__('Deep Check of the Kernel Environment')
          : trans.__('Deep Check'),
      caption: trans.__(
        'Import torch in this kernel to ask it whether CUDA is usable, which GPUs it sees and its cuDNN: torch stays imported, and on a machine with GPUs asking initialises CUDA in the kernel'
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: () => hasKernel() && inspector.phase !== 'no-probe',
      execute: () => inspector.refresh({ deep: true })
    });
    inspector.changed.connect(() => {
      app.commands.notifyCommandChanged(CommandIDs.refreshEnvironment);
      app.commands.notifyCommandChanged(CommandIDs.deepCheck);
    });

    const category = trans.__('GPU Monitor');
    for (const command of [
      CommandIDs.openEnvironmentPanel,
      CommandIDs.refreshEnvironment,
      CommandIDs.deepCheck
    ]) {
      // JupyterLab's palette passes no arguments of its own: the labels'
      // context ("Refresh Kernel Environment") comes from this one.
      palette?.addItem({ command, category, args: { isPalette: true } });
    }
  }
};
