import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from './request';
import { IGpuHistory, IGpuSnapshot, IServerStatus } from './tokens';

/**
 * Read every GPU now: `GET gpus`.
 */
export function fetchSnapshot(
  serverSettings: ServerConnection.ISettings
): Promise<IGpuSnapshot> {
  return requestAPI<IGpuSnapshot>('gpus', serverSettings);
}

/**
 * Read the sampled history: `GET gpus/history`.
 *
 * @param since - only samples taken after this time, in seconds since the
 *   epoch; every sample the server keeps when undefined
 */
export function fetchHistory(
  serverSettings: ServerConnection.ISettings,
  since?: number
): Promise<IGpuHistory> {
  const query =
    since === undefined ? '' : URLExt.objectToQueryString({ since });
  return requestAPI<IGpuHistory>(`gpus/history${query}`, serverSettings);
}

/**
 * Read how the server reads the GPUs: `GET status`.
 */
export function fetchStatus(
  serverSettings: ServerConnection.ISettings
): Promise<IServerStatus> {
  return requestAPI<IServerStatus>('status', serverSettings);
}
