import * as React from 'react';

import { describeFailure } from '../gpu/failure';
import { KernelFollowingItem } from './KernelFollowingItem';
import {
  summarize,
  SummaryMode,
  summaryText,
  summaryTitle
} from '../gpu/summary';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * The status bar item: "GPU 1 · 87 % · 21.9/24.0 GiB" for the GPU the
 * current notebook's kernel uses, else "2 GPUs · max 91 % · 21.9/24.0 GiB"
 * for the busiest GPU or for all of them, "No GPU" calmly, "⚠ GPU error"
 * marked as an error when the GPUs cannot be read and "⚠ GPU 1 lost" when
 * one of them fell off the bus; a click opens the GPU monitor.
 */
export class GpuStatusItem extends KernelFollowingItem {
  /**
   * Create the item.
   */
  constructor(options: GpuStatusItem.IOptions) {
    super(options, 'jp-GpuMonitor-statusItem');
    this._onOpen = options.onOpen;
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
    const { snapshot, failure } = this.model;
    const trans = this.trans;
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
    const summary = summarize(snapshot, this._mode, this.kernelId);
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

  private _onOpen: () => void;
  private _mode: SummaryMode = SETTINGS_DEFAULTS['status-bar'].summary;
}

/**
 * The types of {@link GpuStatusItem}.
 */
export namespace GpuStatusItem {
  /**
   * What the item sums up and what a click does.
   */
  export interface IOptions extends KernelFollowingItem.IOptions {
    /**
     * Open the GPU monitor.
     */
    onOpen: () => void;
  }
}
