import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import {
  FREE_GPU_WINDOW_SECONDS,
  gpuLoads,
  IRoomNeeded,
  leastUsed,
  noRoomText,
  useGpusCaption
} from '../gpu/freeGpu';
import { formatMemory, formatPercent } from '../gpu/units';
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
      <span>
        {trans.__(
          'Least used: GPU %1, %2 free, %3 over the last %4 min.',
          least.index,
          formatMemory(least.freeMiB, trans),
          least.utilizationPercent === null
            ? trans.__('utilization n/a')
            : formatPercent(least.utilizationPercent, trans),
          FREE_GPU_WINDOW_SECONDS / 60
        )}
      </span>{' '}
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
    </p>
  );
}
