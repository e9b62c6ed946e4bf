import { JupyterFrontEnd } from '@jupyterlab/application';
import { NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';

import { CellGpuLines } from '../components/CellGpuLines';
import { kernelHoldings } from '../gpu/processes';
import { WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import { CommandIDs, IGpuMonitorModel } from '../tokens';
import { CellGpuRuns } from './cellGpuRuns';
import { recordedNeed, writeLastRuns } from './notebookRecords';
import { NotebookGpuRuns } from './notebookRuns';
import { NotebookRunRecorder } from './recorder';
import { SpanQueue } from './spanQueue';

/**
 * Which cell used the GPU, for each open notebook: times each cell run from
 * the kernel's messages, asks the server for the kernel's GPU figures over
 * it, shows them under the cell, writes them into the cells' metadata as a
 * save starts, and checks a notebook that has such records against the GPUs
 * when it opens. Loaded with the first notebook, not when JupyterLab opens.
 */
export class NotebookCells {
  /**
   * Follow no notebook yet.
   */
  constructor(options: NotebookCells.IOptions) {
    this._app = options.app;
    this._model = options.model;
    this._cellRuns = options.cellRuns;
    this._settings = options.settings;
    this._trans = options.trans;
    this._queue = new SpanQueue({
      send: async (kernelId, spans) => {
        const { fetchSpans } = await import('../api');
        return fetchSpans(
          this._app.serviceManager.serverSettings,
          kernelId,
          spans
        );
      }
    });
  }

  /**
   * The runs of a notebook it follows; null for any other.
   */
  runsOf(panel: NotebookPanel | null): NotebookGpuRuns | null {
    return (panel && this._notebooks.get(panel)?.runs) ?? null;
  }

  /**
   * Show the notebook of these runs and scroll it to a cell.
   */
  reveal(runs: NotebookGpuRuns, cellId: string): void {
    const panel = [...this._notebooks].find(
      ([, tracked]) => tracked.runs === runs
    )?.[0];
    const cell = panel?.content.widgets.find(
      widget => widget.model.id === cellId
    );
    if (panel && cell) {
      this._app.shell.activateById(panel.id);
      panel.content.activeCellIndex = panel.content.widgets.indexOf(cell);
      void panel.content.scrollToCell(cell, 'center');
    }
  }

  /**
   * Show or hide every notebook's lines as the settings now say.
   */
  applySettings(): void {
    this._notebooks.forEach((tracked, panel) =>
      this._showLines(panel, tracked)
    );
  }

  /**
   * Follow a notebook's cell runs until it closes.
   *
   * @param current - whether it is the current notebook
   */
  track(panel: NotebookPanel, current: boolean): void {
    if (panel.isDisposed || this._notebooks.has(panel)) {
      return;
    }
    const runs = new NotebookGpuRuns({ path: panel.context.path });
    const recorder = new NotebookRunRecorder({
      sessionContext: panel.sessionContext,
      runs,
      measure: (kernelId, span) => this._queue.measure(kernelId, span),
      onRunningChanged: started => this._onRunningChanged(started)
    });
    const tracked: Private.ITracked = { runs, recorder, lines: null };
    this._notebooks.set(panel, tracked);
    this._showLines(panel, tracked);
    if (current) {
      this._cellRuns.current = runs;
    }
    const cells = () => panel.content.model?.cells ?? [];
    panel.context.pathChanged.connect((_, path) => {
      runs.path = path;
    });
    panel.context.saveState.connect((_, state) => {
      // The notebook is serialised right after 'started': the records
      // written now are in the file.
      if (state === 'started' && this._settings.saveLastRun) {
        writeLastRuns(cells(), runs);
      } else if (state === 'completed') {
        runs.need = recordedNeed(cells());
      }
    });
    void panel.context.ready.then(() => {
      runs.need = recordedNeed(cells());
      if (this._settings.checkFitOnOpen) {
        return this._checkOnOpen(runs, panel);
      }
    });
    panel.disposed.connect(() => {
      tracked.recorder.dispose();
      tracked.lines?.dispose();
      this._notebooks.delete(panel);
      if (this._cellRuns.current === runs) {
        this._cellRuns.current = null;
      }
      runs.dispose();
    });
  }

  /**
   * The server reads the GPUs only while someone asks: ask while a cell
   * runs, so that its run has readings.
   */
  private _onRunningChanged(started: boolean): void {
    this._running += started ? 1 : -1;
    if (this._running > 0 && this._watcher === null) {
      this._watcher = this._model.watch();
    } else if (this._running === 0 && this._watcher !== null) {
      this._watcher.dispose();
      this._watcher = null;
    }
  }

  /**
   * Whether the kernel of these runs holds GPU memory now.
   */
  private _usesGpu(runs: NotebookGpuRuns): boolean {
    const snapshot = this._model.snapshot;
    return (
      runs.kernelId !== null &&
      snapshot !== null &&
      kernelHoldings(snapshot.gpus, runs.kernelId).size > 0
    );
  }

  private _showLines(panel: NotebookPanel, tracked: Private.ITracked): void {
    const settings = this._settings;
    if (settings.showCellLine && tracked.lines === null) {
      tracked.lines = new CellGpuLines({
        notebook: panel.content,
        runs: tracked.runs,
        showShortRuns: () =>
          settings.showShortRuns && this._usesGpu(tracked.runs),
        lowUtilizationPercent: settings.lowUtilizationPercent,
        trans: this._trans
      });
    } else if (!settings.showCellLine && tracked.lines !== null) {
      tracked.lines.dispose();
      tracked.lines = null;
    } else if (tracked.lines !== null) {
      tracked.lines.lowUtilizationPercent = settings.lowUtilizationPercent;
    }
  }

  /**
   * Warn when a notebook that recorded its need does not fit on the GPUs.
   */
  private async _checkOnOpen(
    runs: NotebookGpuRuns,
    panel: NotebookPanel
  ): Promise<void> {
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
    const model = this._model;
    await model.read();
    const need = runs.need;
    if (panel.isDisposed || model.snapshot === null || need === null) {
      return;
    }
    const kernelId = panel.sessionContext.session?.kernel?.id ?? null;
    const { checkFit, fitWarning, gpusVisibleTo } = await import('./fit');
    const { useGpusCaption, useGpusLabel } = await import('../freeGpu/freeGpu');
    const visible = gpusVisibleTo(runs.path, model.kernelGpus);
    const fit = checkFit(need, model.snapshot, visible, kernelId);
    if (fit === null || fit.fits) {
      this._fitWarnings.dismiss(runs.path);
      return;
    }
    const gpus = fit.suggestion;
    const trans = this._trans;
    this._fitWarnings.show(
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
                  void this._app.commands.execute(CommandIDs.useGpu, {
                    gpus,
                    path: runs.path
                  });
                }
              }
            ]
          : []
      }
    );
  }

  private _app: JupyterFrontEnd;
  private _model: IGpuMonitorModel;
  private _cellRuns: CellGpuRuns;
  private _settings: NotebookCells.ISettings;
  private _trans: TranslationBundle;
  private _queue: SpanQueue;
  private _notebooks = new Map<NotebookPanel, Private.ITracked>();
  private _running = 0;
  private _watcher: IDisposable | null = null;
  // The fit warning of each notebook, replaced by its next check.
  private _fitWarnings = new NotificationSlots();
}

/**
 * The types of {@link NotebookCells}.
 */
export namespace NotebookCells {
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
   * What it works with.
   */
  export interface IOptions {
    app: JupyterFrontEnd;
    model: IGpuMonitorModel;
    /**
     * The runs of the current notebook, which it sets as notebooks come.
     */
    cellRuns: CellGpuRuns;
    /**
     * The settings, read at each use: the plugin changes them in place.
     */
    settings: ISettings;
    trans: TranslationBundle;
  }
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * What is kept of an open notebook.
   */
  export interface ITracked {
    runs: NotebookGpuRuns;
    recorder: NotebookRunRecorder;
    lines: CellGpuLines | null;
  }
}
