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
 * The status bar item: "2 GPUs · max 91 % · 21.9/24.0 GiB" for the busiest
 * GPU or for all of them, "No GPU" calmly, "⚠ GPU error" marked as an error
 * when the GPUs cannot be read; a click opens the GPU monitor.
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
    const { text, title, error } = this._describe();
    this.toggleClass('jp-mod-error', error);
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
   * What the item says, its tooltip, and whether it reports a failure.
   */
  private _describe(): { text: string; title: string; error: boolean } {
    const { snapshot, failure } = this._model;
    const trans = this._trans;
    const unreadable = trans.__('⚠ GPU error');
    if (failure) {
      const title = describeFailure(failure, trans).message;
      return { text: unreadable, title, error: true };
    }
    if (snapshot === null) {
      const title = trans.__('Reading the GPUs…');
      return { text: trans.__('GPU …'), title, error: false };
    }
    if (snapshot.error) {
      // No driver at all is a machine without an NVIDIA GPU, not a failure.
      return snapshot.error.kind === 'not_installed' &&
        snapshot.source !== 'prometheus'
        ? {
            text: trans.__('No GPU'),
            title: snapshot.error.message,
            error: false
          }
        : { text: unreadable, title: snapshot.error.message, error: true };
    }
    const summary = summarize(snapshot, this._mode);
    return summary === null
      ? {
          text: trans.__('No GPU'),
          title: trans.__('The server reports no GPU.'),
          error: false
        }
      : {
          text: summaryText(summary, trans),
          title: summaryTitle(summary, trans),
          error: false
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
