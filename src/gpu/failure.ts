import { ServerConnection } from '@jupyterlab/services';
import { TranslationBundle } from '@jupyterlab/translation';

import { IGpuMonitorModel, IRequestFailure } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { formatClockTime } from '../format/units';

/**
 * What a failed request to the server extension means.
 *
 * @param error - what the request threw
 * @param timedOut - whether the request was aborted for taking too long
 */
export function classifyFailure(
  error: unknown,
  timedOut = false
): IRequestFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (timedOut) {
    return { kind: 'timeout', message, status: null };
  }
  if (error instanceof ServerConnection.ResponseError) {
    const status = error.response.status;
    return { kind: status === 404 ? 'not_enabled' : 'server', message, status };
  }
  return { kind: 'network', message, status: null };
}

/**
 * A failed request told for a person: what happened and what to do.
 */
export function describeFailure(
  failure: IRequestFailure,
  trans: TranslationBundle
): { message: string; hint: string } {
  switch (failure.kind) {
    case 'not_enabled':
      return {
        message: trans.__(
          'The GPU monitor server extension is not enabled on this Jupyter server.'
        ),
        hint: trans.__(
          'Run "jupyter server extension enable jupyterlab_gpu_monitor" and restart the server.'
        )
      };
    case 'server':
      return {
        message: trans.__(
          'The server could not read the GPUs (error %1): %2',
          failure.status ?? '',
          failure.message
        ),
        hint: trans.__(
          'The Jupyter server log says more. The monitor tries again by itself.'
        )
      };
    case 'network':
      return {
        message: trans.__('The Jupyter server cannot be reached.'),
        hint: trans.__(
          'Check that the server is still running and the network is up. The monitor tries again by itself.'
        )
      };
    case 'timeout':
      return {
        message: trans.__('The Jupyter server did not answer in time.'),
        hint: trans.__(
          'The server may be overloaded. The monitor tries again by itself.'
        )
      };
  }
}

/**
 * When the monitor last asked and how often it asks again, for a reading
 * that failed: "Last tried at 4:05:12 PM · retrying every 1 s". A request
 * that failed is retried less and less often, up to every 30 s (or the
 * interval, when longer); a server that answered with an error is asked
 * again at the interval. Null before the first try.
 */
export function retryText(
  model: Pick<
    IGpuMonitorModel,
    'lastTried' | 'failure' | 'refreshIntervalSeconds'
  >,
  trans: TranslationBundle
): string | null {
  if (model.lastTried === null) {
    return null;
  }
  const at = formatClockTime(model.lastTried / 1000, true);
  const intervalSeconds = model.refreshIntervalSeconds;
  return model.failure !== null
    ? trans.__(
        'Last tried at %1 · retrying, less often while it fails (at most %2 s apart)',
        at,
        Math.max(30, intervalSeconds)
      )
    : trans.__('Last tried at %1 · retrying every %2 s', at, intervalSeconds);
}

/**
 * The readings a view keeps showing, greyed, under a snapshot without GPUs:
 * the last that had some, when GPUs that worked fail (a driver that fell
 * over); none on a machine without an NVIDIA driver, which never had them.
 */
export function lastReadingsUnder(
  snapshot: IGpuSnapshot,
  lastReadings: IGpuSnapshot | null
): IGpuSnapshot | null {
  const without = snapshot.error !== null || snapshot.gpus.length === 0;
  return without && snapshot.error?.kind !== 'not_installed'
    ? lastReadings
    : null;
}
