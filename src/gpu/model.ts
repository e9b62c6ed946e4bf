import { ServerConnection } from '@jupyterlab/services';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { IPoll, Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchHistory, fetchKernels, fetchSnapshot } from '../api';
import {
  IGpuMonitorModel,
  IGpuTimeSeries,
  IKernelGpus,
  IRequestFailure
} from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { IKernelSummary } from '../restapi/kernels';
import { classifyFailure } from './failure';
import { GpuHistoryBuffer } from './history';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * Polls the server extension for the latest snapshot and, while a chart is
 * shown, for the readings taken since the last one it has; while a list of
 * kernels is shown, for this server's kernels too.
 *
 * It asks nothing while nobody watches or the browser tab is hidden; a
 * watcher that comes back gets the readings it missed, as far back as the
 * server keeps them, with a gap where the server did not read the GPUs.
 */
export class GpuModel implements IGpuMonitorModel {
  /**
   * Create a model; it polls once something watches it.
   */
  constructor(options: GpuModel.IOptions) {
    this._serverSettings = options.serverSettings;
    this._requestTimeoutMs = (options.requestTimeoutSeconds ?? 20) * 1000;
    this._refreshIntervalSeconds =
      options.refreshIntervalSeconds ?? SETTINGS_DEFAULTS.model.refreshInterval;
    this._seldomIntervalSeconds = SETTINGS_DEFAULTS.model.seldomInterval;
    this._poll = new Poll({
      name: 'jupyterlab-gpu-monitor:model',
      factory: () => this._tick(),
      frequency: Private.frequency(this._refreshIntervalSeconds),
      standby: () => this._watchers.size === 0 || 'when-hidden'
    });
  }

  /**
   * The latest snapshot; null before the first answer.
   */
  get snapshot(): IGpuSnapshot | null {
    return this._snapshot;
  }

  /**
   * Why the latest request failed; null when it succeeded.
   */
  get failure(): IRequestFailure | null {
    return this._failure;
  }

  /**
   * The latest snapshot that had GPUs to show: what the panel keeps, greyed,
   * while the GPUs cannot be read; null until one has.
   */
  get lastReadings(): IGpuSnapshot | null {
    return this._lastReadings;
  }

  /**
   * When the server was last asked, in milliseconds since the epoch (this
   * browser's clock); null before the first answer.
   */
  get lastTried(): number | null {
    return this._lastTried;
  }

  /**
   * The readings kept for the charts.
   */
  get history(): IGpuTimeSeries {
    return this._history;
  }

  /**
   * Emitted when the snapshot, the failure or the kernel's GPUs change.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted when readings were added to the history.
   */
  get historyChanged(): ISignal<this, void> {
    return this._historyChanged;
  }

  /**
   * How often the model asks the server while someone watches, in seconds.
   */
  get refreshIntervalSeconds(): number {
    return this._refreshIntervalSeconds;
  }
  set refreshIntervalSeconds(seconds: number) {
    this._refreshIntervalSeconds = seconds;
    this._followWatchers();
  }

  /**
   * How often the model asks while only seldom watchers watch, in seconds.
   */
  get seldomIntervalSeconds(): number {
    return this._seldomIntervalSeconds;
  }
  set seldomIntervalSeconds(seconds: number) {
    this._seldomIntervalSeconds = seconds;
    this._followWatchers();
  }

  /**
   * How often the model asks now, in seconds.
   */
  get askingEverySeconds(): number {
    return this._seldom()
      ? Math.max(this._seldomIntervalSeconds, this._refreshIntervalSeconds)
      : this._refreshIntervalSeconds;
  }

  /**
   * The GPUs the current notebook's kernel can see; null when unknown.
   */
  get kernelGpus(): IKernelGpus | null {
    return this._kernelGpus;
  }
  set kernelGpus(gpus: IKernelGpus | null) {
    this._kernelGpus = gpus;
    this._changed.emit();
  }

  /**
   * This server's kernels, most GPU memory first; null until a watcher asks
   * for them and the server answers.
   */
  get kernels(): readonly IKernelSummary[] | null {
    return this._kernels;
  }

  /**
   * Whether the model is disposed.
   */
  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /**
   * Ask the model to poll until the returned disposable is disposed. A new
   * watcher, or the first that shows the history or the kernels, is
   * answered at once.
   */
  watch(options: IGpuMonitorModel.IWatchOptions = {}): IDisposable {
    const watcher = {
      history: options.history ?? false,
      kernels: options.kernels ?? false,
      seldom: options.seldom ?? false
    };
    const answerNow =
      this._watchers.size === 0 ||
      (watcher.history && !this._wants('history')) ||
      (watcher.kernels && !this._wants('kernels'));
    this._watchers.add(watcher);
    this._followWatchers();
    if (answerNow) {
      void this._poll.refresh();
    }
    return new DisposableDelegate(() => {
      this._watchers.delete(watcher);
      this._followWatchers();
    });
  }

  /**
   * Ask the server now, unless nobody watches or the tab is hidden; resolves
   * once the answer is in the model.
   */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick;
  }

  /**
   * Ask the server now even if nobody watches, unless the tab is hidden;
   * resolves once the answer is in the model.
   */
  async read(): Promise<void> {
    // Watched for the length of the request: a poll nobody watches stands by.
    const asking = { history: false, kernels: false, seldom: false };
    this._watchers.add(asking);
    try {
      await this.refresh();
    } finally {
      this._watchers.delete(asking);
    }
  }

  /**
   * Stop polling and disconnect every signal.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  /**
   * Whether a watcher shows the history, or the kernels.
   */
  private _wants(what: 'history' | 'kernels'): boolean {
    return [...this._watchers].some(watcher => watcher[what]);
  }

  /**
   * Whether every watcher is seldom (none counts: the poll stands by).
   */
  private _seldom(): boolean {
    return [...this._watchers].every(watcher => watcher.seldom);
  }

  /**
   * Ask as often as the watchers need, from the next poll on.
   */
  private _followWatchers(): void {
    this._poll.frequency = Private.frequency(this.askingEverySeconds);
  }

  /**
   * One poll: never two requests at once, whatever asks for a refresh.
   */
  private _tick(): Promise<void> {
    if (this._pending === null) {
      this._pending = this._fetch().finally(() => {
        this._pending = null;
      });
    }
    return this._pending;
  }

  /**
   * Ask for the snapshot and, when wanted, the new readings and the kernels;
   * keep what comes back, or why nothing did. Rejects on failure, so that
   * the poll backs off.
   */
  private async _fetch(): Promise<void> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this._requestTimeoutMs);
    const init = { signal: abort.signal };
    // A seldom client says so: the server reads for it, not every interval.
    const every = this._seldom() ? this.askingEverySeconds : undefined;
    try {
      const [snapshot, history, kernels] = await Promise.all([
        fetchSnapshot(this._serverSettings, init, every),
        this._wants('history')
          ? fetchHistory(
              this._serverSettings,
              this._history.lastTimestamp ?? undefined,
              init
            )
          : null,
        this._wants('kernels')
          ? fetchKernels(this._serverSettings, init, every)
          : this._kernels
      ]);
      this._snapshot = snapshot;
      if (snapshot.error === null && snapshot.gpus.length > 0) {
        this._lastReadings = snapshot;
      }
      this._kernels = kernels;
      this._failure = null;
      this._lastTried = Date.now();
      if (history !== null && this._history.append(history)) {
        this._historyChanged.emit();
      }
      this._changed.emit();
    } catch (error) {
      this._failure = classifyFailure(error, abort.signal.aborted);
      this._lastTried = Date.now();
      this._changed.emit();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private _serverSettings: ServerConnection.ISettings;
  private _requestTimeoutMs: number;
  private _refreshIntervalSeconds: number;
  private _seldomIntervalSeconds: number;
  private _poll: Poll;
  private _pending: Promise<void> | null = null;
  private _watchers = new Set<Required<IGpuMonitorModel.IWatchOptions>>();
  private _snapshot: IGpuSnapshot | null = null;
  private _lastReadings: IGpuSnapshot | null = null;
  private _lastTried: number | null = null;
  private _failure: IRequestFailure | null = null;
  private _history = new GpuHistoryBuffer();
  private _kernelGpus: IKernelGpus | null = null;
  private _kernels: readonly IKernelSummary[] | null = null;
  private _changed = new Signal<this, void>(this);
  private _historyChanged = new Signal<this, void>(this);
}

/**
 * The types of {@link GpuModel}.
 */
export namespace GpuModel {
  /**
   * How to reach the server and how often to ask it.
   */
  export interface IOptions {
    /**
     * The connection settings of the Jupyter server.
     */
    serverSettings: ServerConnection.ISettings;
    /**
     * How often to ask while someone watches, in seconds.
     */
    refreshIntervalSeconds?: number;
    /**
     * How long a request may take before it counts as failed, in seconds.
     */
    requestTimeoutSeconds?: number;
  }
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The poll frequency for a refresh interval: after failures it backs off
   * to at most 30 s (or the interval, when longer).
   */
  export function frequency(intervalSeconds: number): IPoll.Frequency {
    const interval = intervalSeconds * 1000;
    return { interval, backoff: true, max: Math.max(30 * 1000, interval) };
  }
}
