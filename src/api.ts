import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from './request';
import { IGpuHistory, IGpuSnapshot, IServerStatus } from './tokens';

/**
 * Read every GPU now: `GET gpus`.
 *
 * @param init - the fetch options, e.g. an abort `signal`
 */
export function fetchSnapshot(
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<IGpuSnapshot> {
  return requestAPI<IGpuSnapshot>('gpus', serverSettings, init);
}

/**
 * Read the sampled history: `GET gpus/history`.
 *
 * @param since - only samples taken after this time, in seconds since the
 *   epoch; every sample the server keeps when undefined
 * @param init - the fetch options, e.g. an abort `signal`
 */
export function fetchHistory(
  serverSettings: ServerConnection.ISettings,
  since?: number,
  init: RequestInit = {}
): Promise<IGpuHistory> {
  const query =
    since === undefined ? '' : URLExt.objectToQueryString({ since });
  return requestAPI<IGpuHistory>(`gpus/history${query}`, serverSettings, init);
}

/**
 * Read how the server reads the GPUs: `GET status`.
 */
export function fetchStatus(
  serverSettings: ServerConnection.ISettings
): Promise<IServerStatus> {
  return requestAPI<IServerStatus>('status', serverSettings);
}
