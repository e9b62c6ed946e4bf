import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel, Session } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';

import { ICellRun } from '../tokens';
import { ISpanFigures } from '../restapi/kernels';
import { NotebookGpuRuns } from './notebookRuns';
import { CellRunTimer } from './runTimer';

/**
 * Records the cell runs of one notebook: times them from its kernel's
 * messages, adds them to its runs, and gives each the kernel's GPU figures
 * once the server has them.
 */
export class NotebookRunRecorder implements IDisposable {
  /**
   * Start recording the runs of a notebook's session.
   */
  constructor(options: NotebookRunRecorder.IOptions) {
    this._sessionContext = options.sessionContext;
    this._runs = options.runs;
    this._measure = options.measure;
    this._onRunningChanged = options.onRunningChanged;
    this._sessionContext.sessionChanged.connect(this._onSessionChanged, this);
    this._sessionContext.kernelChanged.connect(this._onKernelChanged, this);
    this._follow(this._sessionContext.session);
  }

  /**
   * Whether a cell of the notebook is running now.
   */
  get running(): boolean {
    return this._timer.running;
  }

  /**
   * Whether it stopped recording.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Stop recording.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._sessionContext.sessionChanged.disconnect(
      this._onSessionChanged,
      this
    );
    this._sessionContext.kernelChanged.disconnect(this._onKernelChanged, this);
    this._follow(null);
    this._reset();
  }

  /**
   * Listen to the messages of another session.
   */
  private _onSessionChanged(
    _: ISessionContext,
    change: { newValue: Session.ISessionConnection | null }
  ): void {
    this._follow(change.newValue);
  }

  /**
   * A new kernel: what the old one had queued will never end.
   */
  private _onKernelChanged(): void {
    this._reset();
    this._runs.kernelId = this._sessionContext.session?.kernel?.id ?? null;
  }

  /**
   * Listen to the messages of a session's kernel (whichever it is).
   */
  private _follow(session: Session.ISessionConnection | null): void {
    this._session?.anyMessage.disconnect(this._onMessage, this);
    this._session = session;
    this._session?.anyMessage.connect(this._onMessage, this);
    this._runs.kernelId = session?.kernel?.id ?? null;
  }

  /**
   * Time the runs; measure each that ends.
   */
  private _onMessage(_: unknown, args: Kernel.IAnyMessageArgs): void {
    if (args.direction === 'send') {
      this._timer.sent(args.msg);
      return;
    }
    const wasRunning = this._timer.running;
    const event = this._timer.received(args.msg);
    if (this._timer.running !== wasRunning) {
      this._onRunningChanged(this._timer.running);
    }
    if (event?.kind === 'finished' && this._runs.kernelId !== null) {
      void this._measureRun(this._runs.kernelId, this._runs.add(event.run));
    }
  }

  /**
   * Ask the server for a run's figures and give them to it.
   */
  private async _measureRun(kernelId: string, run: ICellRun): Promise<void> {
    const figures = await this._measure(kernelId, run);
    if (figures !== null && !this._isDisposed) {
      this._runs.setFigures(run, figures);
    }
  }

  /**
   * Forget the queued and running requests.
   */
  private _reset(): void {
    const wasRunning = this._timer.running;
    this._timer.reset();
    if (wasRunning) {
      this._onRunningChanged(false);
    }
  }

  private _sessionContext: ISessionContext;
  private _runs: NotebookGpuRuns;
  private _measure: NotebookRunRecorder.IOptions['measure'];
  private _onRunningChanged: (running: boolean) => void;
  private _session: Session.ISessionConnection | null = null;
  private _timer = new CellRunTimer();
  private _isDisposed = false;
}

/**
 * The types of {@link NotebookRunRecorder}.
 */
export namespace NotebookRunRecorder {
  /**
   * What to record, where, and how to measure.
   */
  export interface IOptions {
    /**
     * The notebook's session.
     */
    sessionContext: ISessionContext;
    /**
     * Where its runs go.
     */
    runs: NotebookGpuRuns;
    /**
     * The kernel's GPU figures over a run; null when the server has none.
     */
    measure: (
      kernelId: string,
      span: { start: number; end: number }
    ) => Promise<ISpanFigures | null>;
    /**
     * Called when a cell starts running while none was, and when none is
     * running any more.
     */
    onRunningChanged: (running: boolean) => void;
  }
}
