import { GpuHistoryBuffer } from '../gpu/history';
import { IGpuSnapshot } from '../restapi/gpus';
import { IKernelSummary } from '../restapi/kernels';
import { IGpuMonitorModel, IRequestFailure } from '../tokens';

/**
 * When the fake model last read: the captures' afternoon.
 */
const LAST_TRIED = Date.UTC(2026, 11, 1, 16, 5, 12);

/**
 * A model that holds a given state and reads nothing, for the views: what
 * the views read of a model, as the real one holds it after its reads.
 */
export function modelState(state: {
  snapshot: IGpuSnapshot | null;
  failure?: IRequestFailure | null;
  history?: GpuHistoryBuffer;
  kernels?: IKernelSummary[] | null;
}): IGpuMonitorModel {
  const { snapshot, failure = null } = state;
  return {
    snapshot,
    failure,
    history: state.history ?? new GpuHistoryBuffer(),
    kernels: state.kernels ?? null,
    kernelGpus: null,
    lastReadings: snapshot?.error ? null : snapshot,
    lastTried: snapshot || failure ? LAST_TRIED : null,
    refreshIntervalSeconds: 1
  } as unknown as IGpuMonitorModel;
}
