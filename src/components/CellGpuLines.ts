import type { Cell } from '@jupyterlab/cells';
import type { Notebook } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { PanelLayout } from '@lumino/widgets';

import {
  cellLineDetails,
  cellLineText,
  lowUtilization,
  lowUtilizationHint
} from '../cells/format';
import { NotebookGpuRuns } from '../cells/notebookRuns';
import { ICellRun } from '../tokens';
import { CellGpuLine } from './CellGpuLine';

/**
 * Keeps a line under each code cell of a notebook with the GPU figures of
 * its last run, between the cell's input and its output.
 */
export class CellGpuLines implements IDisposable {
  /**
   * Show the lines of a notebook's runs, those it has and those to come.
   */
  constructor(options: CellGpuLines.IOptions) {
    this._notebook = options.notebook;
    this._runs = options.runs;
    this._showShortRuns = options.showShortRuns;
    this._trans = options.trans;
    this._lowUtilizationPercent = options.lowUtilizationPercent;
    this._runs.runChanged.connect(this._onRunChanged, this);
    this.refresh();
  }

  /**
   * Mean utilisation below this, in percent, gets the low-utilisation hint.
   */
  get lowUtilizationPercent(): number {
    return this._lowUtilizationPercent;
  }
  set lowUtilizationPercent(percent: number) {
    this._lowUtilizationPercent = percent;
    this.refresh();
  }

  /**
   * Whether the lines are gone.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Render the last run of every cell again.
   */
  refresh(): void {
    for (const cell of this._notebook.widgets) {
      const run = this._runs.lastRun(cell.model.id);
      if (run) {
        void this._render(cell, run);
      }
    }
  }

  /**
   * Take the lines away.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._runs.runChanged.disconnect(this._onRunChanged, this);
    for (const line of [...this._lines.values()]) {
      line.dispose();
    }
  }

  /**
   * Show the run that changed, if it is its cell's last.
   */
  private _onRunChanged(runs: NotebookGpuRuns, run: ICellRun): void {
    if (runs.lastRun(run.cellId) !== run) {
      return;
    }
    const cell = this._notebook.widgets.find(
      widget => widget.model.id === run.cellId
    );
    if (cell) {
      void this._render(cell, run);
    }
  }

  /**
   * Show a run under its cell, once the cell is rendered.
   */
  private async _render(cell: Cell, run: ICellRun): Promise<void> {
    if (cell.model.type !== 'code') {
      return;
    }
    await cell.ready;
    if (this._isDisposed || cell.isDisposed) {
      return;
    }
    const percent = this._lowUtilizationPercent;
    const figures = run.figures;
    this._line(cell).render(
      cellLineText(run, this._showShortRuns(), this._trans),
      cellLineDetails(figures, this._trans),
      lowUtilization(figures, percent)
        ? lowUtilizationHint(figures, percent, this._trans)
        : null
    );
  }

  /**
   * The line of a cell, put right under its input the first time.
   */
  private _line(cell: Cell): CellGpuLine {
    let line = this._lines.get(cell);
    if (!line) {
      const created = new CellGpuLine();
      const layout = cell.layout as PanelLayout;
      const input = layout.widgets.findIndex(widget =>
        widget.hasClass('jp-Cell-inputWrapper')
      );
      layout.insertWidget(input + 1, created);
      // The cell disposes its children with itself.
      created.disposed.connect(() => this._lines.delete(cell));
      this._lines.set(cell, created);
      line = created;
    }
    return line;
  }

  private _notebook: Notebook;
  private _runs: NotebookGpuRuns;
  private _showShortRuns: () => boolean;
  private _trans: TranslationBundle;
  private _lowUtilizationPercent: number;
  private _lines = new Map<Cell, CellGpuLine>();
  private _isDisposed = false;
}

/**
 * The types of {@link CellGpuLines}.
 */
export namespace CellGpuLines {
  /**
   * The notebook, its runs, and how to word them.
   */
  export interface IOptions {
    /**
     * The notebook whose cells get the lines.
     */
    notebook: Notebook;
    /**
     * Its runs.
     */
    runs: NotebookGpuRuns;
    /**
     * Whether a run too short to measure gets a line: by a setting, and only
     * while the kernel uses a GPU.
     */
    showShortRuns: () => boolean;
    /**
     * Mean utilisation below this, in percent, gets the low-utilisation hint.
     */
    lowUtilizationPercent: number;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}
