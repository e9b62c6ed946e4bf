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
 * The status bar item: "GPU 1 · 87 % · 21.9/24.0 GiB" for the GPU the
 * current notebook's kernel uses, else "2 GPUs · max 91 % · 21.9/24.0 GiB"
 * for the busiest GPU or for all of them, "No GPU" calmly, "⚠ GPU error"
 * marked as an error when the GPUs cannot be read and "⚠ GPU 1 lost" when
 * one of them fell off the bus; a click opens the GPU monitor.
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
   * The kernel of the current notebook, whose GPUs the item sums up where it
   * holds memory; null when there is none.
   */
  get kernelId(): string | null {
    return this._kernelId;
  }
  set kernelId(kernelId: string | null) {
    if (kernelId !== this._kernelId) {
      this._kernelId = kernelId;
      this.update();
    }
  }

  /**
   * The item's content.
   */
  render(): React.ReactElement {
    const { text, title, error, kernel, warn } = this._describe();
    this.toggleClass('jp-mod-error', error);
    this.toggleClass('jp-mod-warn', warn);
    this.toggleClass('jp-mod-kernel', kernel);
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
   * What the item says, its tooltip, whether it reports a failure, and
   * whether it is about the current notebook's kernel's GPUs, and whether one
   * of those is nearly out of memory.
   */
  private _describe(): {
    text: string;
    title: string;
    error: boolean;
    kernel: boolean;
    warn: boolean;
  } {
    const { snapshot, failure } = this._model;
    const trans = this._trans;
    const unreadable = trans.__('⚠ GPU error');
    if (failure) {
      const title = describeFailure(failure, trans).message;
      return {
        text: unreadable,
        title,
        error: true,
        kernel: false,
        warn: false
      };
    }
    if (snapshot === null) {
      const title = trans.__('Reading the GPUs…');
      return {
        text: trans.__('GPU …'),
        title,
        error: false,
        kernel: false,
        warn: false
      };
    }
    if (snapshot.error) {
      // No driver at all is a machine without an NVIDIA GPU, not a failure.
      const calm =
        snapshot.error.kind === 'not_installed' &&
        snapshot.source !== 'prometheus';
      return {
        text: calm ? trans.__('No GPU') : unreadable,
        title: snapshot.error.message,
        error: !calm,
        kernel: false,
        warn: false
      };
    }
    // A lost GPU is what matters now, whichever GPU the item would sum up.
    const lost = snapshot.gpus.filter(gpu => gpu.error?.kind === 'gpu_lost');
    if (lost.length > 0) {
      return {
        text:
          lost.length === 1
            ? trans.__('⚠ GPU %1 lost', lost[0].index)
            : trans.__('⚠ %1 GPUs lost', lost.length),
        title: [...lost.map(gpu => gpu.error!.message), lost[0].error!.hint]
          .filter(Boolean)
          .join('\n'),
        error: true,
        kernel: false,
        warn: false
      };
    }
    const summary = summarize(snapshot, this._mode, this._kernelId);
    return summary === null
      ? {
          text: trans.__('No GPU'),
          title: trans.__('The server reports no GPU.'),
          error: false,
          kernel: false,
          warn: false
        }
      : {
          text: summaryText(summary, trans),
          title: summaryTitle(summary, trans),
          error: false,
          kernel: summary.kernel,
          warn: summary.nearlyFull.length > 0
        };
  }

  private _model: IGpuMonitorModel;
  private _onOpen: () => void;
  private _trans: TranslationBundle;
  private _mode: SummaryMode = SETTINGS_DEFAULTS['status-bar'].summary;
  private _kernelId: string | null = null;
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
