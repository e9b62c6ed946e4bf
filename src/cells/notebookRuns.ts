import { ISignal, Signal } from '@lumino/signaling';

import { ICellRun, INotebookGpuNeed, INotebookGpuRuns } from '../tokens';
import { ISpanFigures } from '../restapi/kernels';
import { ICellRunTiming } from './runTimer';

/**
 * The runs of one open notebook's cells, each cell's last run, and what the
 * notebook needs of a GPU. Bounded: the oldest runs are dropped past
 * `maxRuns`, as the charts show at most the server's hour of readings.
 */
export class NotebookGpuRuns implements INotebookGpuRuns {
  /**
   * Create the runs of a notebook that has run nothing yet.
   */
  constructor(options: NotebookGpuRuns.IOptions) {
    this._path = options.path;
    this._maxRuns = options.maxRuns ?? 1000;
  }

  /**
   * The notebook's path on the server; it changes when it is renamed.
   */
  get path(): string {
    return this._path;
  }
  set path(path: string) {
    this._path = path;
    this._changed.emit();
  }

  /**
   * Its kernel's id; null without a kernel.
   */
  get kernelId(): string | null {
    return this._kernelId;
  }
  set kernelId(kernelId: string | null) {
    this._kernelId = kernelId;
    this._changed.emit();
  }

  /**
   * What it needed at its peak, as its cells recorded; null without records.
   */
  get need(): INotebookGpuNeed | null {
    return this._need;
  }
  set need(need: INotebookGpuNeed | null) {
    this._need = need;
    this._changed.emit();
  }

  /**
   * Its cells' runs since it was opened, oldest first.
   */
  get runs(): readonly ICellRun[] {
    return this._runs;
  }

  /**
   * Grows by one each time a run is added or gets its figures.
   */
  get revision(): number {
    return this._revision;
  }

  /**
   * Emitted with a run when it is added or gets its figures.
   */
  get runChanged(): ISignal<this, ICellRun> {
    return this._runChanged;
  }

  /**
   * Emitted when anything changes: a run, the path, the kernel, the need.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * The last run of a cell since the notebook was opened.
   */
  lastRun(cellId: string): ICellRun | undefined {
    return this._lastRuns.get(cellId);
  }

  /**
   * Add a run that has just ended; its figures are to come.
   */
  add(timing: ICellRunTiming): ICellRun {
    const run: ICellRun = { ...timing, figures: null };
    this._runs.push(run);
    if (this._runs.length > this._maxRuns) {
      this._runs.splice(0, this._runs.length - this._maxRuns);
    }
    this._lastRuns.set(run.cellId, run);
    this._emitRun(run);
    return run;
  }

  /**
   * Give a run the figures the server answered with.
   *
   * @returns the run with its figures; null when the run was dropped
   */
  setFigures(run: ICellRun, figures: ISpanFigures): ICellRun | null {
    // A run gets its figures soon after it is added: look from the end.
    const position = this._runs.lastIndexOf(run);
    if (position < 0) {
      return null;
    }
    const measured = { ...run, figures };
    this._runs[position] = measured;
    if (this._lastRuns.get(run.cellId) === run) {
      this._lastRuns.set(run.cellId, measured);
    }
    this._emitRun(measured);
    return measured;
  }

  /**
   * Stop emitting.
   */
  dispose(): void {
    Signal.clearData(this);
  }

  /**
   * Tell that a run changed.
   */
  private _emitRun(run: ICellRun): void {
    this._revision++;
    this._runChanged.emit(run);
    this._changed.emit();
  }

  private _path: string;
  private _maxRuns: number;
  private _kernelId: string | null = null;
  private _need: INotebookGpuNeed | null = null;
  private _runs: ICellRun[] = [];
  private _lastRuns = new Map<string, ICellRun>();
  private _revision = 0;
  private _runChanged = new Signal<this, ICellRun>(this);
  private _changed = new Signal<this, void>(this);
}

/**
 * The types of {@link NotebookGpuRuns}.
 */
export namespace NotebookGpuRuns {
  /**
   * The notebook, and how many runs to keep.
   */
  export interface IOptions {
    /**
     * The notebook's path on the server.
     */
    path: string;
    /**
     * The most runs kept; the oldest are dropped past it.
     */
    maxRuns?: number;
  }
}
