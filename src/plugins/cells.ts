import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';

// Runs are recorded from the first notebook on, and the records are written
// synchronously as a save starts: these load with the plugin.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CellGpuRuns } from '../cells/cellGpuRuns';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { recordedNeed, writeLastRuns } from '../cells/notebookRecords';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { NotebookGpuRuns } from '../cells/notebookRuns';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { NotebookRunRecorder } from '../cells/recorder';
import { SpanQueue } from '../cells/spanQueue';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CellGpuLines } from '../components/CellGpuLines';
import { kernelHoldings } from '../gpu/processes';
import { WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import {
  CommandIDs,
  ICellGpuRuns,
  IGpuMonitorModel,
  TRANSLATION_DOMAIN
} from '../tokens';
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
    const settings: Private.ISettings = { ...Private.DEFAULT_SETTINGS };
    const queue = new SpanQueue({
      send: async (kernelId, spans) => {
        const { fetchSpans } = await import('../api');
        return fetchSpans(app.serviceManager.serverSettings, kernelId, spans);
      }
    });
    const notebooks = new Map<NotebookPanel, Private.ITracked>();
    const cellRuns = new CellGpuRuns({
      reveal: (runs, cellId) => {
        const panel = [...notebooks].find(
          ([, tracked]) => tracked.runs === runs
        )?.[0];
        const cell = panel?.content.widgets.find(
          widget => widget.model.id === cellId
        );
        if (panel && cell) {
          app.shell.activateById(panel.id);
          panel.content.activeCellIndex = panel.content.widgets.indexOf(cell);
          void panel.content.scrollToCell(cell, 'center');
        }
      }
    });

    // The server reads the GPUs only while someone asks: ask while a cell
    // runs, so that its run has readings.
    let running = 0;
    let watcher: IDisposable | null = null;
    const onRunningChanged = (started: boolean): void => {
      running += started ? 1 : -1;
      if (running > 0 && watcher === null) {
        watcher = model.watch();
      } else if (running === 0 && watcher !== null) {
        watcher.dispose();
        watcher = null;
      }
    };

    const usesGpu = (runs: NotebookGpuRuns): boolean =>
      runs.kernelId !== null &&
      model.snapshot !== null &&
      kernelHoldings(model.snapshot.gpus, runs.kernelId).size > 0;

    const showLines = (panel: NotebookPanel, tracked: Private.ITracked) => {
      if (settings.showCellLine && tracked.lines === null) {
        tracked.lines = new CellGpuLines({
          notebook: panel.content,
          runs: tracked.runs,
          showShortRuns: () => settings.showShortRuns && usesGpu(tracked.runs),
          lowUtilizationPercent: settings.lowUtilizationPercent,
          trans
        });
      } else if (!settings.showCellLine && tracked.lines !== null) {
        tracked.lines.dispose();
        tracked.lines = null;
      } else if (tracked.lines !== null) {
        tracked.lines.lowUtilizationPercent = settings.lowUtilizationPercent;
      }
    };

    // The fit warning of each notebook, replaced by its next check.
    const fitWarnings = new NotificationSlots();
    const checkOnOpen = async (runs: NotebookGpuRuns, panel: NotebookPanel) => {
      if (runs.need === null) {
        return;
      }
      // What the notebook's own kernel holds is room for it: checked before
      // that kernel is known, a reloaded notebook was told it did not fit on
      // the GPU its kernel runs on (3 of 4 reloads).
      try {
        await panel.sessionContext.ready;
      } catch {
        // No kernel could start: nothing of the GPUs is the notebook's.
      }
      await model.read();
      const need = runs.need;
      if (panel.isDisposed || model.snapshot === null || need === null) {
        return;
      }
      const kernelId = panel.sessionContext.session?.kernel?.id ?? null;
      const { checkFit, fitWarning, gpusVisibleTo } =
        await import('../cells/fit');
      const { useGpusCaption, useGpusLabel } = await import('../gpu/freeGpu');
      const visible = gpusVisibleTo(runs.path, model.kernelGpus);
      const fit = checkFit(need, model.snapshot, visible, kernelId);
      if (fit === null || fit.fits) {
        fitWarnings.dismiss(runs.path);
        return;
      }
      const gpus = fit.suggestion;
      fitWarnings.show(
        runs.path,
        'warning',
        fitWarning(runs.path, need, fit, trans),
        {
          autoClose: WARNING_AUTO_CLOSE_MS,
          actions: gpus
            ? [
                {
                  label: useGpusLabel(gpus, trans),
                  caption: useGpusCaption(trans),
                  callback: () => {
                    void app.commands.execute(CommandIDs.useGpu, {
                      gpus,
                      path: runs.path
                    });
                  }
                }
              ]
            : []
        }
      );
    };

    const track = (panel: NotebookPanel): void => {
      const runs = new NotebookGpuRuns({ path: panel.context.path });
      const recorder = new NotebookRunRecorder({
        sessionContext: panel.sessionContext,
        runs,
        measure: (kernelId, span) => queue.measure(kernelId, span),
        onRunningChanged
      });
      const tracked: Private.ITracked = { runs, recorder, lines: null };
      notebooks.set(panel, tracked);
      showLines(panel, tracked);
      if (tracker.currentWidget === panel) {
        cellRuns.current = runs;
      }
      const cells = () => panel.content.model?.cells ?? [];
      panel.context.pathChanged.connect((_, path) => {
        runs.path = path;
      });
      panel.context.saveState.connect((_, state) => {
        // The notebook is serialised right after 'started': the records
        // written now are in the file.
        if (state === 'started' && settings.saveLastRun) {
          writeLastRuns(cells(), runs);
        } else if (state === 'completed') {
          runs.need = recordedNeed(cells());
        }
      });
      void panel.context.ready.then(() => {
        runs.need = recordedNeed(cells());
        if (settings.checkFitOnOpen) {
          return checkOnOpen(runs, panel);
        }
      });
      panel.disposed.connect(() => {
        tracked.recorder.dispose();
        tracked.lines?.dispose();
        notebooks.delete(panel);
        if (cellRuns.current === runs) {
          cellRuns.current = null;
        }
        runs.dispose();
      });
    };

    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    tracker.currentChanged.connect((_, panel) => {
      cellRuns.current = (panel && notebooks.get(panel)?.runs) ?? null;
    });

    void followSettings(registry, cellsPlugin.id, loaded => {
      Object.assign(settings, loaded.composite);
      notebooks.forEach((tracked, panel) => showLines(panel, tracked));
    });
    return cellRuns;
  }
};

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The plugin's settings (schema/cells.json).
   */
  export interface ISettings {
    showCellLine: boolean;
    showShortRuns: boolean;
    lowUtilizationPercent: number;
    saveLastRun: boolean;
    checkFitOnOpen: boolean;
  }

  /**
   * The defaults of the settings, until they are loaded.
   */
  export const DEFAULT_SETTINGS: ISettings = SETTINGS_DEFAULTS.cells;

  /**
   * What is kept of an open notebook.
   */
  export interface ITracked {
    runs: NotebookGpuRuns;
    recorder: NotebookRunRecorder;
    lines: CellGpuLines | null;
  }
}
