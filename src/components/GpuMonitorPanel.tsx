import { ITranslator } from '@jupyterlab/translation';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import * as React from 'react';

import { CHART_KINDS, ChartKind, chartWindow } from '../charts/chartKinds';
import { downloadFile } from '../download';
import { gpuIcon } from '../icons';
import { ICellGpuRuns, IGpuMonitorModel, ILabModel } from '../tokens';
import { IPanelActions } from './actions';
import { WatchingPanel } from './WatchingPanel';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * The panel's content, with uPlot: loaded the first time the panel is shown,
 * not while JupyterLab starts.
 */
const GpuMonitor = React.lazy(async () => ({
  default: (await import('./GpuMonitor')).GpuMonitor
}));

/**
 * Which charts the panel shows.
 */
export type ChartVisibility = { readonly [K in ChartKind]?: boolean };

/**
 * The GPU monitor side panel. It asks the model for the history and the
 * kernels only while it is visible; hidden, it neither polls for them nor
 * renders.
 */
export class GpuMonitorPanel extends WatchingPanel {
  /**
   * Create the panel.
   */
  constructor(options: GpuMonitorPanel.IOptions) {
    super({
      id: 'jp-GpuMonitor-panel',
      className: 'jp-GpuMonitor-panel',
      icon: gpuIcon,
      label: trans => trans.__('GPU Monitor'),
      area: 'side',
      translator: options.translator
    });
    this._model = options.model;
    this._actions = options.actions;
    this._cellRuns = options.cellRuns ?? null;
    this._lab = options.lab ?? null;
    this._model.changed.connect(this.onSourceChanged, this);
    this._lab?.changed.connect(this.onSourceChanged, this);
    this._model.historyChanged.connect(this.onSourceChanged, this);
    this._cellRuns?.changed.connect(this.onSourceChanged, this);
  }

  /**
   * How far back the charts show, in seconds.
   */
  get windowSeconds(): number {
    return this._windowSeconds;
  }
  set windowSeconds(seconds: number) {
    if (seconds !== this._windowSeconds) {
      this._windowSeconds = seconds;
      this._windowChanged.emit(seconds);
      this.update();
    }
  }

  /**
   * How much of a card's memory must be free, in percent, for the least
   * used GPU to be proposed when the notebook recorded no need.
   */
  get freeGpuMinFreePercent(): number {
    return this._freeGpuMinFreePercent;
  }
  set freeGpuMinFreePercent(percent: number) {
    if (percent !== this._freeGpuMinFreePercent) {
      this._freeGpuMinFreePercent = percent;
      this.update();
    }
  }

  /**
   * Whether the panel shows the lab's machines (and asks for them).
   */
  get showLab(): boolean {
    return this._showLab;
  }
  set showLab(show: boolean) {
    if (show !== this._showLab) {
      this._showLab = show;
      this._followLab();
      this.update();
    }
  }

  /**
   * Emitted when the window changes, e.g. when the user picks another.
   */
  get windowChanged(): ISignal<this, number> {
    return this._windowChanged;
  }

  /**
   * Which charts are shown; a chart left out is shown.
   */
  set chartVisibility(visibility: ChartVisibility) {
    this._charts = CHART_KINDS.filter(kind => visibility[kind] ?? true);
    this.update();
  }

  /**
   * Redraw the charts in the colours of the theme now in force.
   */
  themeChanged(): void {
    this._themeRevision++;
    this.update();
  }

  /**
   * Download the readings of the window the charts show, as CSV.
   */
  async exportCsv(): Promise<void> {
    const history = this._model.history;
    const shown = chartWindow(history, this._windowSeconds);
    if (shown === null) {
      return;
    }
    // Loaded when asked for: not part of what /lab fetches when it opens.
    const { csvFileName, historyCsv } = await import('../charts/csv');
    downloadFile(
      historyCsv(history, shown.min),
      csvFileName(shown.max),
      'text/csv'
    );
  }

  /**
   * The panel's content.
   */
  render(): React.ReactElement | null {
    return this.renderLoaded(this.trans.__('Loading the GPU Monitor…'), () => (
      <GpuMonitor
        model={this._model}
        charts={this._charts}
        windowSeconds={this._windowSeconds}
        themeRevision={this._themeRevision}
        onWindowChange={seconds => {
          this.windowSeconds = seconds;
        }}
        onExport={() => this.exportCsv()}
        notebook={this._cellRuns?.current ?? null}
        freeGpuMinFreeShare={this._freeGpuMinFreePercent / 100}
        onRevealCell={cellId => this._cellRuns?.revealCell(cellId)}
        lab={this._showLab ? this._lab : null}
        actions={this._actions}
        trans={this.trans}
      />
    ));
  }

  /**
   * Have the model poll for the history and the kernels, besides the latest
   * readings, and the lab's model for the lab while it is shown (once,
   * where the server has no lab).
   */
  protected watch(): IDisposable[] {
    this._watching = true;
    this._followLab();
    return [
      this._model.watch({ history: true, kernels: true }),
      new DisposableDelegate(() => {
        this._watching = false;
        this._followLab();
      })
    ];
  }

  /**
   * Watch the lab while the panel watches and shows it; stop otherwise.
   */
  private _followLab(): void {
    const wanted = this._watching && this._showLab && this._lab !== null;
    if (wanted && this._labWatcher === null) {
      this._labWatcher = this._lab!.watch();
    } else if (!wanted && this._labWatcher !== null) {
      this._labWatcher.dispose();
      this._labWatcher = null;
    }
  }

  private _model: IGpuMonitorModel;
  private _actions: IPanelActions;
  private _cellRuns: ICellGpuRuns | null;
  private _lab: ILabModel | null;
  private _showLab: boolean = SETTINGS_DEFAULTS.panel.lab;
  private _watching = false;
  private _labWatcher: IDisposable | null = null;
  private _windowSeconds: number = SETTINGS_DEFAULTS.panel.historyWindow;
  private _charts: readonly ChartKind[] = CHART_KINDS;
  private _freeGpuMinFreePercent: number =
    SETTINGS_DEFAULTS.panel.freeGpuMinFreePercent;
  private _themeRevision = 0;
  private _windowChanged = new Signal<this, number>(this);
}

/**
 * The types of {@link GpuMonitorPanel}.
 */
export namespace GpuMonitorPanel {
  /**
   * What the panel shows and in which language.
   */
  export interface IOptions {
    /**
     * The model whose state is shown.
     */
    model: IGpuMonitorModel;
    /**
     * What the panel's links and buttons do.
     */
    actions: IPanelActions;
    /**
     * The current notebook's cell runs, when per-cell attribution is on.
     */
    cellRuns?: ICellGpuRuns | null;
    /**
     * The lab's machines, shown where the server names a lab's Prometheus.
     */
    lab?: ILabModel | null;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
