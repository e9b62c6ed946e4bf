import { ISignal, Signal } from '@lumino/signaling';

import { ICellGpuRuns } from '../tokens';
import { NotebookGpuRuns } from './notebookRuns';

/**
 * The runs of the current notebook, for the panel: follows the notebook that
 * is current and tells when it, or its runs, change.
 */
export class CellGpuRuns implements ICellGpuRuns {
  /**
   * Create it with no current notebook.
   */
  constructor(options: CellGpuRuns.IOptions) {
    this._reveal = options.reveal;
  }

  /**
   * The current notebook's runs; null when no notebook is current.
   */
  get current(): NotebookGpuRuns | null {
    return this._current;
  }
  set current(runs: NotebookGpuRuns | null) {
    if (runs === this._current) {
      return;
    }
    this._current?.changed.disconnect(this._emit, this);
    this._current = runs;
    this._current?.changed.connect(this._emit, this);
    this._emit();
  }

  /**
   * Emitted when the current notebook changes, or its runs or need do.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Show the current notebook and scroll it to a cell.
   */
  revealCell(cellId: string): void {
    if (this._current) {
      this._reveal(this._current, cellId);
    }
  }

  /**
   * Tell that something changed.
   */
  private _emit(): void {
    this._changed.emit();
  }

  private _reveal: CellGpuRuns.IOptions['reveal'];
  private _current: NotebookGpuRuns | null = null;
  private _changed = new Signal<this, void>(this);
}

/**
 * The types of {@link CellGpuRuns}.
 */
export namespace CellGpuRuns {
  /**
   * How to show a cell.
   */
  export interface IOptions {
    /**
     * Show a notebook and scroll it to a cell.
     */
    reveal: (notebook: NotebookGpuRuns, cellId: string) => void;
  }
}
