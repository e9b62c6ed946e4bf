import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The panel's tab is in the sidebar from the start; its content and uPlot
// load when it is first shown.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import {
  ChartVisibility,
  GpuMonitorPanel
} from '../components/GpuMonitorPanel';
import { commandActions } from '../components/actions';
import { gpuIcon } from '../icons';
import {
  CommandIDs,
  ICellGpuRuns,
  IGpuMonitorModel,
  ILabModel,
  PANEL_PLUGIN_ID,
  TRANSLATION_DOMAIN
} from '../tokens';
import { followSettings } from './settings';

/**
 * Adds the GPU monitor side panel and the commands that open it and export
 * its readings. Its links and buttons run the commands of the other
 * plugins (open a notebook, interrupt or shut down a kernel, release its
 * cached GPU memory, use a GPU).
 */
export const panelPlugin: JupyterFrontEndPlugin<void> = {
  id: PANEL_PLUGIN_ID,
  description:
    "Adds the GPU Monitor side panel: a row per GPU, the processes on them and their notebooks, the user's kernels, the least used GPU, live charts with the current notebook's cell runs, and a CSV export of the readings shown.",
  autoStart: true,
  requires: [IGpuMonitorModel],
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    ITranslator,
    IThemeManager,
    ICellGpuRuns,
    ILabModel
  ],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null,
    themeManager: IThemeManager | null,
    cellRuns: ICellGpuRuns | null,
    lab: ILabModel | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const panel = new GpuMonitorPanel({
      model,
      actions: commandActions(app.commands),
      cellRuns,
      lab,
      translator
    });
    app.shell.add(panel, 'left', { rank: 700 });
    restorer?.add(panel, 'jupyterlab-gpu-monitor');
    themeManager?.themeChanged.connect(() => panel.themeChanged());

    app.commands.addCommand(CommandIDs.openPanel, {
      label: trans.__('GPU Monitor'),
      caption: trans.__('Show the GPU Monitor side panel'),
      icon: args => (args.isPalette ? undefined : gpuIcon),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => {
        app.shell.activateById(panel.id);
      }
    });
    app.commands.addCommand(CommandIDs.exportHistoryCsv, {
      label: trans.__('Export GPU History as CSV'),
      caption: trans.__(
        'Download the GPU readings the charts show (timestamp, GPU, utilization, memory, temperature, power) as CSV'
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: () => model.history.timestamps.length > 0,
      execute: () => panel.exportCsv()
    });
    const category = trans.__('GPU Monitor');
    palette?.addItem({
      command: CommandIDs.openPanel,
      category,
      args: { isPalette: true }
    });
    palette?.addItem({ command: CommandIDs.exportHistoryCsv, category });

    void followSettings(registry, panelPlugin.id, settings => {
      panel.chartVisibility = settings.get('charts')
        .composite as ChartVisibility;
      panel.windowSeconds = settings.get('historyWindow').composite as number;
      panel.freeGpuMinFreePercent = settings.get('freeGpuMinFreePercent')
        .composite as number;
      panel.showLab = settings.get('lab').composite as boolean;
    }).then(settings => {
      panel.windowChanged.connect((_, seconds) => {
        void settings?.set('historyWindow', seconds);
      });
    });
  }
};
