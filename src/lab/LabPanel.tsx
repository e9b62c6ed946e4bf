import { ITranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { WatchingPanel } from '../components/WatchingPanel';
import { IRoomNeeded } from '../freeGpu/freeGpu';
import { gpuIcon } from '../icons';
import { ICellGpuRuns, ILabModel } from '../tokens';

/**
 * The view's content: loaded when the Lab tab is first shown, not while
 * JupyterLab starts.
 */
const LabView = React.lazy(async () => ({
  default: (await import('./LabView')).LabView
}));

/**
 * The GPU Lab, a main-area tab: every machine of the lab, with the holders'
 * notebooks, and the lab's ledger. It asks for them only while it is
 * visible.
 */
export class LabPanel extends WatchingPanel {
  /**
   * Create the tab.
   */
  constructor(options: LabPanel.IOptions) {
    super({
      id: 'jp-GpuMonitor-lab',
      className: 'jp-GpuMonitor-labPanel',
      icon: gpuIcon,
      label: trans => trans.__('GPU Lab'),
      area: 'main',
      translator: options.translator
    });
    this._lab = options.lab;
    this._cellRuns = options.cellRuns ?? null;
    this._minFreeShare = options.minFreeShare;
    this._lab.changed.connect(this.onSourceChanged, this);
    this._cellRuns?.changed.connect(this.onSourceChanged, this);
  }

  /**
   * The tab's content.
   */
  render(): React.ReactElement | null {
    const room: IRoomNeeded = {
      need: this._cellRuns?.current?.need ?? null,
      minFreeShare: this._minFreeShare()
    };
    return this.renderLoaded(this.trans.__('Loading the GPU Lab…'), () => (
      <LabView
        view={this._lab.view}
        failure={this._lab.failure}
        compact={false}
        room={room}
        ledger={{
          answer: this._lab.ledger,
          seconds: this._lab.ledgerSeconds,
          onSeconds: seconds => {
            this._lab.ledgerSeconds = seconds;
          }
        }}
        trans={this.trans}
      />
    ));
  }

  /**
   * A closed tab is done with: the next opens anew.
   */
  protected onCloseRequest(msg: Message): void {
    super.onCloseRequest(msg);
    this.dispose();
  }

  protected watch(): IDisposable[] {
    return [this._lab.watch({ ledger: true })];
  }

  private _lab: ILabModel;
  private _cellRuns: ICellGpuRuns | null;
  private _minFreeShare: () => number;
}

/**
 * The types of {@link LabPanel}.
 */
export namespace LabPanel {
  /**
   * What the tab shows and in which language.
   */
  export interface IOptions {
    /**
     * The lab's machines.
     */
    lab: ILabModel;
    /**
     * The current notebook's cell runs, for the room it needs.
     */
    cellRuns?: ICellGpuRuns | null;
    /**
     * The share of a card that must be free without a recorded need (the
     * panel's setting), from 0 to 1.
     */
    minFreeShare: () => number;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
