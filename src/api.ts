import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI, requestText } from './request';
import {
  EnvironmentFileStyle,
  IEnvironmentList,
  IEnvironmentPackages
} from './restapi/envs';
import {
  IGpuHistory,
  IGpuSnapshot,
  ILabLedger,
  ILabView,
  IServerStatus
} from './restapi/gpus';
import {
  IDiagnosis,
  IKernelProbe,
  IProbeExpression
} from './restapi/inspector';
import {
  ICacheReleaseAnswer,
  IKernelSummary,
  ISpansAnswer
} from './restapi/kernels';

/**
 * Read every GPU now: `GET gpus`.
 *
 * @param init - the fetch options, e.g. an abort `signal`
 * @param every - how often this client asks, in seconds, when seldom: the
 *   server then reads for it instead of every interval
 */
export function fetchSnapshot(
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {},
  every?: number
): Promise<IGpuSnapshot> {
  return requestAPI<IGpuSnapshot>(`gpus${asks(every)}`, serverSettings, init);
}

/**
 * The query saying how often a seldom client asks; none otherwise.
 */
function asks(every?: number): string {
  return every === undefined ? '' : URLExt.objectToQueryString({ every });
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
 * Read every machine of the lab, from the lab's Prometheus: `GET lab`.
 *
 * @param init - the fetch options, e.g. an abort `signal`
 */
export function fetchLab(
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<ILabView> {
  return requestAPI<ILabView>('lab', serverSettings, init);
}

/**
 * Read each notebook's GPU-hours busy and idle-held over the last
 * `sinceSeconds` (whole hours), from the lab's Prometheus:
 * `GET lab/ledger?since=<s>`.
 *
 * @param init - the fetch options, e.g. an abort `signal`
 */
export function fetchLabLedger(
  serverSettings: ServerConnection.ISettings,
  sinceSeconds: number,
  init: RequestInit = {}
): Promise<ILabLedger> {
  const query = URLExt.objectToQueryString({ since: sinceSeconds });
  return requestAPI<ILabLedger>(`lab/ledger${query}`, serverSettings, init);
}

/**
 * Read how the server reads the GPUs: `GET status`.
 */
export function fetchStatus(
  serverSettings: ServerConnection.ISettings
): Promise<IServerStatus> {
  return requestAPI<IServerStatus>('status', serverSettings);
}

/**
 * Read this server's kernels and the GPU memory each holds, most first:
 * `GET kernels`.
 *
 * @param init - the fetch options, e.g. an abort `signal`
 * @param every - how often this client asks, when seldom (see fetchSnapshot)
 */
export function fetchKernels(
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {},
  every?: number
): Promise<IKernelSummary[]> {
  return requestAPI<IKernelSummary[]>(
    `kernels${asks(every)}`,
    serverSettings,
    init
  );
}

/**
 * A kernel's GPU figures over spans of time (cell runs):
 * `POST kernels/<kernelId>/spans`.
 *
 * @param spans - the spans, in seconds since the epoch; at most 2000
 */
export function fetchSpans(
  serverSettings: ServerConnection.ISettings,
  kernelId: string,
  spans: readonly { start: number; end: number }[]
): Promise<ISpansAnswer> {
  return requestAPI<ISpansAnswer>(
    `kernels/${encodeURIComponent(kernelId)}/spans`,
    serverSettings,
    { method: 'POST', body: JSON.stringify({ spans }) }
  );
}

/**
 * Release the GPU memory torch's caching allocator keeps in an idle kernel
 * (`gc.collect()`, `torch.cuda.empty_cache()`, run silently when the kernel
 * imported torch): `POST kernels/<kernelId>/release-cached-memory`.
 *
 * @throws {ServerConnection.ResponseError} 409 while the kernel runs a cell,
 *   504 when it did not answer in time, 404 for an unknown kernel
 */
export function releaseCachedMemory(
  serverSettings: ServerConnection.ISettings,
  kernelId: string
): Promise<ICacheReleaseAnswer> {
  return requestAPI<ICacheReleaseAnswer>(
    `kernels/${encodeURIComponent(kernelId)}/release-cached-memory`,
    serverSettings,
    { method: 'POST' }
  );
}

/**
 * Get the kernel probe as one Python expression: `GET probe`.
 *
 * @param options.deep - whether the probe imports torch to ask it about CUDA
 * @param options.packages - distributions to report besides the defaults
 */
export function fetchProbeExpression(
  serverSettings: ServerConnection.ISettings,
  options: { deep: boolean; packages: readonly string[] }
): Promise<IProbeExpression> {
  const query = URLExt.objectToQueryString({
    deep: options.deep ? 1 : 0,
    packages: options.packages.join(',')
  });
  return requestAPI<IProbeExpression>(`probe${query}`, serverSettings);
}

/**
 * Ask what the server sees of a kernel, completed by the probe's answer when
 * there is one, and the findings: `POST diagnose`.
 *
 * @param request.expected_prefix - the environment the notebook's
 *   fingerprint recorded
 */
export function diagnoseKernel(
  serverSettings: ServerConnection.ISettings,
  request: {
    kernel_id: string;
    probe: IKernelProbe | null;
    expected_prefix?: string;
  }
): Promise<IDiagnosis> {
  return requestAPI<IDiagnosis>('diagnose', serverSettings, {
    method: 'POST',
    body: JSON.stringify(request)
  });
}

/**
 * List the conda environments and kernelspec venvs: `GET envs`.
 */
export function fetchEnvironments(
  serverSettings: ServerConnection.ISettings
): Promise<IEnvironmentList> {
  return requestAPI<IEnvironmentList>('envs', serverSettings);
}

/**
 * Read an environment's packages: `GET envs/<id>`.
 */
export function fetchEnvironmentPackages(
  serverSettings: ServerConnection.ISettings,
  id: string
): Promise<IEnvironmentPackages> {
  return requestAPI<IEnvironmentPackages>(
    `envs/${encodeURIComponent(id)}`,
    serverSettings
  );
}

/**
 * Export an environment as environment.yml: `GET envs/<id>/export`.
 */
export function fetchEnvironmentFile(
  serverSettings: ServerConnection.ISettings,
  id: string,
  style: EnvironmentFileStyle
): Promise<string> {
  const query = URLExt.objectToQueryString({ style });
  return requestText(
    `envs/${encodeURIComponent(id)}/export${query}`,
    serverSettings
  );
}
