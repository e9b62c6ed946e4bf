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
import { addInspectorCommands } from '../env/inspectorCommands';
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
    addInspectorCommands(app.commands, inspector, trans);

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
