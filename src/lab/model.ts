import { ServerConnection } from '@jupyterlab/services';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchLab, fetchLabLedger } from '../api';
import { classifyFailure } from '../gpu/failure';
import { ILabLedger, ILabView } from '../restapi/gpus';
import { ILabModel, IRequestFailure } from '../tokens';

/**
 * How often a watched Lab view asks, in seconds: the server reads the lab's
 * Prometheus at most every 5 s for all its clients, and a lab's Prometheus
 * scrapes every 15 s or more.
 */
export const LAB_REFRESH_SECONDS = 10;

/**
 * The ledger's periods, in seconds.
 */
export const LEDGER_PERIODS = {
  day: 86400,
  week: 7 * 86400,
  month: 30 * 86400
} as const;

/**
 * Polls the server's `GET lab` while a Lab view is watched and the browser
 * tab is visible, and `GET lab/ledger` while one shows the ledger; never
 * again once the server says it has no lab.
 */
export class LabModel implements ILabModel {
  /**
   * Create a model; it asks once something watches it.
   */
  constructor(options: LabModel.IOptions) {
    this._serverSettings = options.serverSettings;
    const interval = (options.refreshSeconds ?? LAB_REFRESH_SECONDS) * 1000;
    this._poll = new Poll({
      name: 'jupyterlab-gpu-monitor:lab',
      factory: () => this._fetch(),
      frequency: { interval, backoff: true, max: Math.max(60_000, interval) },
      standby: () =>
        this._watchers === 0 || this._configured === false || 'when-hidden'
    });
  }

  get view(): ILabView | null {
    return this._view;
  }

  get failure(): IRequestFailure | null {
    return this._failure;
  }

  get configured(): boolean | null {
    return this._configured;
  }

  get ledger(): ILabLedger | null {
    return this._ledger;
  }

  get ledgerSeconds(): number {
    return this._ledgerSeconds;
  }
  set ledgerSeconds(seconds: number) {
    if (seconds !== this._ledgerSeconds) {
      this._ledgerSeconds = seconds;
      this._ledger = null;
      this._changed.emit();
      this._askNow();
    }
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  watch(options: { ledger?: boolean } = {}): IDisposable {
    const ledger = options.ledger ?? false;
    this._watchers++;
    this._ledgerWatchers += ledger ? 1 : 0;
    const newNeed = this._watchers === 1 || (ledger && this._ledger === null);
    if (newNeed && this._configured !== false) {
      this._askNow();
    }
    return new DisposableDelegate(() => {
      this._watchers--;
      this._ledgerWatchers -= ledger ? 1 : 0;
    });
  }

  /**
   * Ask at once, even while an answer is coming: it may lack what a new
   * watcher or period needs (Poll.refresh would be dropped while the
   * poll's phase is still that of the refresh that brought it).
   */
  private _askNow(): void {
    void this._poll.schedule({ interval: Poll.IMMEDIATE, phase: 'refreshed' });
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
   * Ask for the view and keep it, or why this server did not answer;
   * rejects on failure, so that the poll backs off.
   */
  private async _fetch(): Promise<void> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 30_000);
    const init = { signal: abort.signal };
    const since = this._ledgerSeconds;
    try {
      const [view, ledger] = await Promise.all([
        fetchLab(this._serverSettings, init),
        this._ledgerWatchers > 0
          ? fetchLabLedger(this._serverSettings, since, init)
          : this._ledger
      ]);
      this._view = view;
      // A period changed while asking: its own answer comes next.
      this._ledger =
        ledger?.since_seconds === this._ledgerSeconds ? ledger : null;
      this._configured = view.configured;
      this._failure = null;
      this._changed.emit();
    } catch (error) {
      this._failure = classifyFailure(error, abort.signal.aborted);
      this._changed.emit();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private _serverSettings: ServerConnection.ISettings;
  private _poll: Poll;
  private _watchers = 0;
  private _ledgerWatchers = 0;
  private _view: ILabView | null = null;
  private _ledger: ILabLedger | null = null;
  private _ledgerSeconds = LEDGER_PERIODS.week;
  private _failure: IRequestFailure | null = null;
  private _configured: boolean | null = null;
  private _changed = new Signal<this, void>(this);
}

/**
 * The types of {@link LabModel}.
 */
export namespace LabModel {
  /**
   * Where to ask, and how often.
   */
  export interface IOptions {
    /**
     * The server's connection settings.
     */
    serverSettings: ServerConnection.ISettings;
    /**
     * How often a watched model asks, in seconds.
     */
    refreshSeconds?: number;
  }
}
