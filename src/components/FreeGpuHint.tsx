import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import {
  gpuLoads,
  IGpuLoad,
  IRoomNeeded,
  leastUsed,
  noRoomText,
  useGpusCaption
} from '../freeGpu/freeGpu';
import { formatMemory, formatPercent } from '../format/units';
import { IGpuTimeSeries } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { IPanelActions } from './actions';

/**
 * The properties of {@link FreeGpuHint}.
 */
export namespace FreeGpuHint {
  /**
   * The properties of {@link FreeGpuHint}.
   */
  export interface IProps {
    /**
     * The latest snapshot.
     */
    snapshot: IGpuSnapshot;
    /**
     * The readings kept, for the last minutes of each GPU.
     */
    history: IGpuTimeSeries;
    /**
     * The current notebook's kernel; null without one.
     */
    kernelId: string | null;
    /**
     * The room a GPU must have free to be proposed.
     */
    room: IRoomNeeded;
    /**
     * What the button does.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * On a machine with several GPUs, the least used one over the last minutes
 * (memory and utilisation) among those with the room needed, and a button
 * that points the current notebook at it; or why none has the room.
 */
export function FreeGpuHint(
  props: FreeGpuHint.IProps
): React.ReactElement | null {
  const { snapshot, history, kernelId, room, actions, trans } = props;
  const notebookOpen = actions.canUseGpus();
  const loads = gpuLoads(snapshot, history, kernelId);
  if (loads.length < 2) {
    return null;
  }
  const least = leastUsed(loads, room);
  if (least === null) {
    return (
      <p className="jp-GpuMonitor-freeGpu">{noRoomText(loads, room, trans)}</p>
    );
  }
  const use = trans.__('Use GPU %1 in the current notebook', least.index);
  return (
    <p className="jp-GpuMonitor-freeGpu">
      <span>{Private.leastUsedText(least, trans)}</span>{' '}
      <button
        type="button"
        className="jp-GpuMonitor-button"
        aria-label={use}
        title={useGpusCaption(trans)}
        disabled={!notebookOpen}
        onClick={() => actions.useGpus([least.index])}
      >
        {trans.__('Use it')}
      </button>
      {/* Why it is disabled, where it is read, not only in a tooltip. */}
      {!notebookOpen && (
        <span className="jp-GpuMonitor-disabledReason">
          {' '}
          {trans.__('(open a notebook first)')}
        </span>
      )}
      {/* A line of its own: its minutes grow while the panel reads. */}
      <span className="jp-GpuMonitor-freeGpuPeriod">
        {Private.periodText(least, trans)}
      </span>
    </p>
  );
}

/**
 * File-local parts of the hint.
 */
namespace Private {
  /**
   * What the least used GPU has: the memory free (once the notebook's
   * kernel restarts, where it holds some there: the room it is proposed
   * for), and its mean utilisation.
   */
  export function leastUsedText(
    least: IGpuLoad,
    trans: TranslationBundle
  ): string {
    const free =
      least.ownMiB > 0
        ? trans.__(
            '%1 free once this kernel restarts',
            formatMemory(least.freeMiB + least.ownMiB, trans)
          )
        : trans.__('%1 free', formatMemory(least.freeMiB, trans));
    const utilization =
      least.utilizationPercent === null
        ? trans.__('utilization n/a')
        : trans.__(
            '%1 utilization',
            formatPercent(least.utilizationPercent, trans)
          );
    return trans.__(
      'Least used: GPU %1, %2, %3.',
      least.index,
      free,
      utilization
    );
  }

  /**
   * Over how much of the readings the least used GPU was judged, in whole
   * minutes (a panel's readings are seconds to minutes): not the window they
   * are taken from.
   */
  export function periodText(
    least: IGpuLoad,
    trans: TranslationBundle
  ): string {
    if (least.measuredSeconds === 0) {
      return trans.__('From the current reading alone.');
    }
    const minutes = Math.floor(least.measuredSeconds / 60);
    return trans.__(
      'Judged on %1 of readings.',
      minutes === 0 ? trans.__('< 1 min') : trans.__('%1 min', minutes)
    );
  }
}
