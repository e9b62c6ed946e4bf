import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The current notebook's runs, for the panel: a token, made with the plugin.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CellGpuRuns } from '../cells/cellGpuRuns';
import type { NotebookCells } from '../cells/notebookCells';
import { ICellGpuRuns, IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';
import { followSettings } from './settings';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * Which cell used the GPU: times each cell run from the kernel's messages,
 * asks the server for the kernel's GPU figures over it, shows them under the
 * cell, saves them in the cell's metadata, and checks a notebook that has
 * such records against the GPUs when it opens.
 */
export const cellsPlugin: JupyterFrontEndPlugin<ICellGpuRuns> = {
  id: 'jupyterlab-gpu-monitor:cells',
  description:
    "Shows under each code cell the GPU memory, utilization and duration of its last run, records them in the cell's metadata on save, and warns when a notebook opens that will not fit on its GPU.",
  autoStart: true,
  provides: ICellGpuRuns,
  requires: [IGpuMonitorModel, INotebookTracker],
  optional: [ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    tracker: INotebookTracker,
    registry: ISettingRegistry | null,
    translator: ITranslator | null
  ): ICellGpuRuns => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const settings: NotebookCells.ISettings = { ...SETTINGS_DEFAULTS.cells };
    let cells: NotebookCells | null = null;
    const cellRuns = new CellGpuRuns({
      reveal: (runs, cellId) => cells?.reveal(runs, cellId)
    });
    // What follows each notebook loads with the first one, not with
    // JupyterLab: well before its kernel runs a cell.
    let loading: Promise<NotebookCells> | null = null;
    const load = (): Promise<NotebookCells> =>
      (loading ??= import('../cells/notebookCells').then(
        ({ NotebookCells }) =>
          (cells = new NotebookCells({
            app,
            model,
            cellRuns,
            settings,
            trans
          }))
      ));
    const track = (panel: NotebookPanel): void => {
      void load().then(loaded =>
        loaded.track(panel, tracker.currentWidget === panel)
      );
    };
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    tracker.currentChanged.connect((_, panel) => {
      cellRuns.current = cells?.runsOf(panel) ?? null;
    });

    void followSettings(registry, cellsPlugin.id, loaded => {
      Object.assign(settings, loaded.composite);
      cells?.applySettings();
    });
    return cellRuns;
  }
};
