import { ITranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { gpuIcon } from '../icons';
import { ICellGpuRuns, IGpuMonitorModel } from '../tokens';
import { WatchingPanel } from './WatchingPanel';

/**
 * The dashboard's content, with uPlot: loaded when the dashboard is first
 * opened, not while JupyterLab starts.
 */
const GpuDashboard = React.lazy(async () => ({
  default: (await import('./GpuDashboard')).GpuDashboard
}));

/**
 * The GPU dashboard, a main-area tab: every chart at full size. It asks the
 * model for the history only while it is visible.
 */
export class GpuDashboardPanel extends WatchingPanel {
  /**
   * Create the dashboard.
   */
  constructor(options: GpuDashboardPanel.IOptions) {
    super({
      id: 'jp-GpuMonitor-dashboard',
      className: 'jp-GpuMonitor-dashboard',
      icon: gpuIcon,
      label: trans => trans.__('GPU Dashboard'),
      area: 'main',
      translator: options.translator
    });
    this._model = options.model;
    this._cellRuns = options.cellRuns ?? null;
    this._windowSeconds = options.windowSeconds;
    this._model.changed.connect(this.onSourceChanged, this);
    this._model.historyChanged.connect(this.onSourceChanged, this);
    this._cellRuns?.changed.connect(this.onSourceChanged, this);
  }

  /**
   * Redraw the charts in the colours of the theme now in force.
   */
  themeChanged(): void {
    this._themeRevision++;
    this.update();
  }

  /**
   * The dashboard's content.
   */
  render(): React.ReactElement | null {
    return this.renderLoaded(
      this.trans.__('Loading the GPU dashboard…'),
      () => (
        <GpuDashboard
          model={this._model}
          windowSeconds={this._windowSeconds}
          themeRevision={this._themeRevision}
          notebook={this._cellRuns?.current ?? null}
          onRevealCell={cellId => this._cellRuns?.revealCell(cellId)}
          trans={this.trans}
        />
      )
    );
  }

  /**
   * A closed dashboard is done with: the next opens anew.
   */
  protected onCloseRequest(msg: Message): void {
    super.onCloseRequest(msg);
    this.dispose();
  }

  /**
   * Have the model poll for the history, besides the latest readings.
   */
  protected watch(): IDisposable[] {
    return [this._model.watch({ history: true })];
  }

  private _model: IGpuMonitorModel;
  private _cellRuns: ICellGpuRuns | null;
  private _windowSeconds: number;
  private _themeRevision = 0;
}

/**
 * The types of {@link GpuDashboardPanel}.
 */
export namespace GpuDashboardPanel {
  /**
   * What the dashboard shows and in which language.
   */
  export interface IOptions {
    /**
     * The model whose state is shown.
     */
    model: IGpuMonitorModel;
    /**
     * The current notebook's cell runs, when per-cell attribution is on.
     */
    cellRuns?: ICellGpuRuns | null;
    /**
     * How far back the charts show at first, in seconds.
     */
    windowSeconds: number;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
