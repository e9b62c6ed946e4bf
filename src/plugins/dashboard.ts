import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IThemeManager } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The dashboard's tab is restored with the layout; its content and uPlot
// load when it is first shown.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addDashboardCommand } from '../components/dashboardCommand';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';
import {
  CommandIDs,
  ICellGpuRuns,
  IGpuMonitorModel,
  PANEL_PLUGIN_ID,
  TRANSLATION_DOMAIN
} from '../tokens';
import { followSettings } from './settings';

/**
 * Adds the GPU dashboard: a main-area tab with every chart at full size,
 * opened from the panel, the launcher and the command palette, and
 * restored with the layout.
 */
export const dashboardPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:dashboard',
  description:
    "Adds the GPU Dashboard, a main-area tab: a full-size chart per measurement with a line per GPU, a legend that hides a GPU or shows it alone, one crosshair across the charts, pause, the time window, and the current notebook's cell runs.",
  autoStart: true,
  requires: [IGpuMonitorModel],
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    ILauncher,
    ISettingRegistry,
    ITranslator,
    IThemeManager,
    ICellGpuRuns
  ],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null,
    themeManager: IThemeManager | null,
    cellRuns: ICellGpuRuns | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    // The dashboard opens on the panel's window.
    let windowSeconds: number = SETTINGS_DEFAULTS.panel.historyWindow;
    void followSettings(registry, PANEL_PLUGIN_ID, settings => {
      windowSeconds = settings.get('historyWindow').composite as number;
    });
    const tracker = addDashboardCommand({
      app,
      model,
      cellRuns,
      translator,
      windowSeconds: () => windowSeconds
    });
    themeManager?.themeChanged.connect(() =>
      tracker.forEach(dashboard => dashboard.themeChanged())
    );
    void restorer?.restore(tracker, {
      command: CommandIDs.openDashboard,
      name: () => 'gpu-dashboard'
    });
    palette?.addItem({
      command: CommandIDs.openDashboard,
      category: trans.__('GPU Monitor')
    });
    launcher?.add({
      command: CommandIDs.openDashboard,
      // The launcher's own section, in JupyterLab's own words.
      category: (translator ?? nullTranslator).load('jupyterlab').__('Other'),
      rank: 10
    });
  }
};
