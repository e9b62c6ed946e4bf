import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';

import { describeFailure } from '../gpu/failure';
import {
  summarize,
  SummaryMode,
  summaryText,
  summaryTitle
} from '../gpu/summary';
import { IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * The status bar item: "GPU 37% · 12.3/80.0 GiB" for the busiest GPU or for
 * all of them; a click opens the GPU monitor.
 */
export class GpuStatusItem extends ReactWidget {
  /**
   * Create the item.
   */
  constructor(options: GpuStatusItem.IOptions) {
    super();
    this._model = options.model;
    this._onOpen = options.onOpen;
    this._trans = (options.translator ?? nullTranslator).load(
      TRANSLATION_DOMAIN
    );
    this.addClass('jp-GpuMonitor-statusItem');
    this._model.changed.connect(this.update, this);
  }

  /**
   * Whether the item sums up the busiest GPU or all of them.
   */
  get mode(): SummaryMode {
    return this._mode;
  }
  set mode(mode: SummaryMode) {
    this._mode = mode;
    this.update();
  }

  /**
   * The item's content.
   */
  render(): React.ReactElement {
    const { text, title } = this._describe();
    return (
      <button
        type="button"
        className="jp-GpuMonitor-statusButton"
        title={title}
        onClick={this._onOpen}
      >
        {text}
      </button>
    );
  }

  /**
   * What the item says and its tooltip.
   */
  private _describe(): { text: string; title: string } {
    const { snapshot, failure } = this._model;
    const trans = this._trans;
    const unavailable = trans.__('GPU n/a');
    if (failure) {
      return {
        text: unavailable,
        title: describeFailure(failure, trans).message
      };
    }
    if (snapshot === null) {
      return { text: trans.__('GPU …'), title: trans.__('Reading the GPUs…') };
    }
    if (snapshot.error) {
      return { text: unavailable, title: snapshot.error.message };
    }
    const summary = summarize(snapshot, this._mode);
    return summary === null
      ? { text: unavailable, title: trans.__('The server reports no GPU.') }
      : {
          text: summaryText(summary, trans),
          title: summaryTitle(summary, trans)
        };
  }

  private _model: IGpuMonitorModel;
  private _onOpen: () => void;
  private _trans: TranslationBundle;
  private _mode: SummaryMode = SETTINGS_DEFAULTS['status-bar'].summary;
}

/**
 * The types of {@link GpuStatusItem}.
 */
export namespace GpuStatusItem {
  /**
   * What the item sums up and what a click does.
   */
  export interface IOptions {
    /**
     * The model whose state is summed up.
     */
    model: IGpuMonitorModel;
    /**
     * Open the GPU monitor.
     */
    onOpen: () => void;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
