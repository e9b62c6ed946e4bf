/**
 * Interfaces, command ids and the REST payload types of the GPU monitor.
 *
 * The payload types mirror the JSON the Python server extension returns; their
 * snake_case keys are the wire contract and are kept as they are.
 */

import { Token } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

/**
 * The gettext domain of every string this extension shows.
 */
export const TRANSLATION_DOMAIN = 'jupyterlab_gpu_monitor';

/**
 * The ids of every command this extension registers.
 */
export namespace CommandIDs {
  /**
   * Show how the server extension reads the GPUs, and why it cannot.
   */
  export const showServerStatus = 'gpu-monitor:show-server-status';
  /**
   * Show the GPU monitor side panel.
   */
  export const openPanel = 'gpu-monitor:open';
  /**
   * Download the readings of the window the charts show, as CSV.
   */
  export const exportHistoryCsv = 'gpu-monitor:export-history-csv';
}

/**
 * Where the server reads GPU samples from.
 */
export type GpuSourceName = 'nvml' | 'nvidia-smi' | 'prometheus';

/**
 * What went wrong while reading the GPUs, as the server classifies it.
 */
export type GpuErrorKind =
  | 'not_installed'
  | 'driver_not_loaded'
  | 'version_mismatch'
  | 'no_devices'
  | 'gpu_lost'
  | 'permission'
  | 'timeout'
  | 'bad_output'
  | 'unknown';

/**
 * A failure to read the GPUs, with a readable message and a fix hint.
 */
export interface IGpuError {
  /**
   * The class of failure.
   */
  kind: GpuErrorKind;
  /**
   * What happened, for a person.
   */
  message: string;
  /**
   * What to do about it, for a person.
   */
  hint: string;
}

/**
 * One MIG (Multi-Instance GPU) device of a physical GPU.
 */
export interface IMigDevice {
  /**
   * The MIG device index within its GPU.
   */
  index: number;
  /**
   * The MIG device UUID.
   */
  uuid: string | null;
  /**
   * The MIG profile, e.g. `1g.10gb`.
   */
  profile: string | null;
  /**
   * The GPU instance id.
   */
  gpu_instance_id: number | null;
  /**
   * The compute instance id.
   */
  compute_instance_id: number | null;
  /**
   * The memory of this MIG device, in MiB.
   */
  memory_total_mib: number | null;
  /**
   * The memory in use on this MIG device, in MiB.
   */
  memory_used_mib: number | null;
}

/**
 * A compute process running on a GPU.
 */
export interface IGpuProcess {
  /**
   * The process id, as the driver reports it (host PID namespace).
   */
  pid: number;
  /**
   * The GPU memory the process holds, in MiB.
   */
  used_memory_mib: number | null;
  /**
   * The process name.
   */
  name: string | null;
  /**
   * The process type as the driver reports it, e.g. `C` for compute.
   */
  type: string | null;
  /**
   * The GPU instance the process runs in, under MIG.
   */
  gpu_instance_id: number | null;
  /**
   * The user the process runs as; sent once the server joins processes
   * with their owners.
   */
  user?: string | null;
  /**
   * The notebook (or other session path) whose kernel runs the process; sent
   * once the server joins processes with kernels.
   */
  session_path?: string | null;
}

/**
 * One physical GPU at one point in time.
 *
 * A measurement is null when it cannot be read; `unavailable` says why.
 */
export interface IGpu {
  /**
   * The GPU index, as nvidia-smi numbers it.
   */
  index: number;
  /**
   * The GPU UUID.
   */
  uuid: string | null;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * The PCI bus id.
   */
  pci_bus_id: string | null;
  /**
   * The share of time a kernel ran on the GPU, in percent.
   */
  utilization_gpu: number | null;
  /**
   * The share of time device memory was read or written, in percent.
   */
  utilization_memory: number | null;
  /**
   * The total device memory, in MiB.
   */
  memory_total_mib: number | null;
  /**
   * The device memory in use, in MiB.
   */
  memory_used_mib: number | null;
  /**
   * The free device memory, in MiB.
   */
  memory_free_mib: number | null;
  /**
   * The core temperature, in degrees Celsius.
   */
  temperature_c: number | null;
  /**
   * The power draw, in watts.
   */
  power_draw_w: number | null;
  /**
   * The power limit, in watts.
   */
  power_limit_w: number | null;
  /**
   * The fan speed, in percent of its maximum.
   */
  fan_speed_pct: number | null;
  /**
   * The streaming multiprocessor clock, in MHz.
   */
  sm_clock_mhz: number | null;
  /**
   * Whether MIG is enabled on this GPU.
   */
  mig_mode: 'enabled' | 'disabled' | null;
  /**
   * The MIG devices of this GPU, empty when MIG is off.
   */
  mig_devices: IMigDevice[];
  /**
   * The compute processes running on this GPU.
   */
  processes: IGpuProcess[];
  /**
   * Why a null field is null, by field name,
   * e.g. `utilization_gpu: 'not available under MIG'`.
   */
  unavailable: { [field: string]: string };
  /**
   * What went wrong reading this GPU, if anything.
   */
  error: IGpuError | null;
}

/**
 * The body of `GET /gpu-monitor/api/gpus`: every GPU at one point in time.
 */
export interface IGpuSnapshot {
  /**
   * The source the sample was read from; null when no source works.
   */
  source: GpuSourceName | null;
  /**
   * When the sample was read, in seconds since the epoch.
   */
  timestamp: number;
  /**
   * The NVIDIA driver version.
   */
  driver_version: string | null;
  /**
   * The highest CUDA version the driver supports.
   */
  cuda_version: string | null;
  /**
   * What went wrong reading the GPUs, if anything.
   */
  error: IGpuError | null;
  /**
   * The GPUs, by index.
   */
  gpus: IGpu[];
}

/**
 * The sampled history of one GPU; every series has one value per timestamp.
 */
export interface IGpuSeries {
  /**
   * The GPU index.
   */
  index: number;
  /**
   * The GPU UUID.
   */
  uuid: string | null;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * GPU utilisation, in percent.
   */
  utilization_gpu: (number | null)[];
  /**
   * Memory controller utilisation, in percent.
   */
  utilization_memory: (number | null)[];
  /**
   * Device memory in use, in MiB.
   */
  memory_used_mib: (number | null)[];
  /**
   * Total device memory, in MiB.
   */
  memory_total_mib: (number | null)[];
  /**
   * Core temperature, in degrees Celsius.
   */
  temperature_c: (number | null)[];
  /**
   * Power draw, in watts.
   */
  power_draw_w: (number | null)[];
  /**
   * Fan speed, in percent.
   */
  fan_speed_pct: (number | null)[];
  /**
   * Streaming multiprocessor clock, in MHz.
   */
  sm_clock_mhz: (number | null)[];
}

/**
 * The body of `GET /gpu-monitor/api/gpus/history?since=T`: the samples
 * taken after `T`.
 */
export interface IGpuHistory {
  /**
   * The time between two samples, in seconds.
   */
  interval_seconds: number;
  /**
   * How far back the server keeps samples, in seconds.
   */
  history_seconds: number;
  /**
   * When each sample was read, in seconds since the epoch, oldest first.
   */
  timestamps: number[];
  /**
   * One series per GPU.
   */
  gpus: IGpuSeries[];
}

/**
 * The body of `GET /gpu-monitor/api/status`: how the server reads the GPUs.
 */
export interface IServerStatus {
  /**
   * The version of the server extension.
   */
  version: string;
  /**
   * The source in use; null when no source works.
   */
  source: string | null;
  /**
   * The source the server is configured to use.
   */
  source_setting: 'auto' | 'nvml' | 'nvidia-smi';
  /**
   * The time between two samples, in seconds.
   */
  interval_seconds: number;
  /**
   * How far back samples are kept, in seconds.
   */
  history_seconds: number;
  /**
   * How long the sampler keeps running after the last client asked, in seconds.
   */
  idle_seconds: number;
  /**
   * Whether the sampler is running now.
   */
  sampling: boolean;
  /**
   * How many times the server has read the GPUs since it started.
   */
  reads: number;
  /**
   * The NVIDIA driver version.
   */
  driver_version: string | null;
  /**
   * The highest CUDA version the driver supports.
   */
  cuda_version: string | null;
  /**
   * What went wrong reading the GPUs, if anything.
   */
  error: IGpuError | null;
}

/**
 * The body of an error response, as jupyter_server's `APIHandler` writes it.
 */
export interface IErrorBody {
  /**
   * What went wrong, for a person.
   */
  message: string;
  /**
   * The HTTP reason phrase; null when the handler gave none.
   */
  reason?: string | null;
}

/**
 * A measurement the frontend keeps a history of, named as in the REST payload.
 */
export type GpuSeriesField =
  'utilization_gpu' | 'memory_used_mib' | 'temperature_c' | 'power_draw_w';

/**
 * The history of one GPU: one value per timestamp of its
 * {@link IGpuTimeSeries}, null where there is no reading (a gap).
 */
export interface IGpuColumns {
  /**
   * The GPU index.
   */
  readonly index: number;
  /**
   * The GPU UUID.
   */
  readonly uuid: string | null;
  /**
   * The product name.
   */
  readonly name: string | null;
  /**
   * The values of each measurement, oldest first.
   */
  readonly values: {
    readonly [F in GpuSeriesField]: readonly (number | null)[];
  };
}

/**
 * The readings the frontend keeps: a shared time column and, per GPU, one
 * column per measurement.
 */
export interface IGpuTimeSeries {
  /**
   * When each reading was taken, in seconds since the epoch, oldest first.
   */
  readonly timestamps: readonly number[];
  /**
   * The columns of each GPU, by index.
   */
  readonly gpus: readonly IGpuColumns[];
  /**
   * The time between two readings on the server, in seconds.
   */
  readonly intervalSeconds: number;
  /**
   * Grows by one each time readings are added or dropped.
   */
  readonly revision: number;
}

/**
 * Why a request to the server extension failed.
 *
 * - `not_enabled`: the server extension is not loaded (404)
 * - `server`: the server answered with another error status
 * - `network`: the server could not be reached
 * - `timeout`: the server did not answer in time
 */
export type RequestFailureKind =
  'not_enabled' | 'server' | 'network' | 'timeout';

/**
 * A failed request to the server extension.
 */
export interface IRequestFailure {
  /**
   * The class of failure.
   */
  kind: RequestFailureKind;
  /**
   * What the server or the browser said.
   */
  message: string;
  /**
   * The HTTP status, when the server answered.
   */
  status: number | null;
}

/**
 * The GPUs a notebook's kernel can use, as an inspector of the kernel's
 * environment resolved its `CUDA_VISIBLE_DEVICES`.
 */
export interface IKernelGpus {
  /**
   * Who can see them, for a person: the notebook or kernel name.
   */
  label: string;
  /**
   * The nvidia-smi indices of the GPUs the kernel can see.
   */
  indices: readonly number[];
}

/**
 * The GPU monitor's model: the latest snapshot and the history of every GPU,
 * polled from the server extension while someone watches.
 */
export interface IGpuMonitorModel extends IDisposable {
  /**
   * The latest snapshot; null before the first answer.
   */
  readonly snapshot: IGpuSnapshot | null;
  /**
   * Why the latest request failed; null when it succeeded.
   */
  readonly failure: IRequestFailure | null;
  /**
   * The readings kept for the charts. Read it; never modify it.
   */
  readonly history: IGpuTimeSeries;
  /**
   * Emitted when the snapshot, the failure or the kernel's GPUs change.
   */
  readonly changed: ISignal<IGpuMonitorModel, void>;
  /**
   * Emitted when readings were added to the history.
   */
  readonly historyChanged: ISignal<IGpuMonitorModel, void>;
  /**
   * How often the model asks the server while someone watches, in seconds.
   */
  refreshIntervalSeconds: number;
  /**
   * The GPUs the current notebook's kernel can see; null when unknown.
   */
  kernelGpus: IKernelGpus | null;
  /**
   * Ask the model to poll until the returned disposable is disposed; with no
   * watcher left, it stops asking the server.
   */
  watch(options?: IGpuMonitorModel.IWatchOptions): IDisposable;
  /**
   * Ask the server now; resolves once the answer is in the model.
   */
  refresh(): Promise<void>;
}

/**
 * The types of {@link IGpuMonitorModel}.
 */
export namespace IGpuMonitorModel {
  /**
   * What a watcher needs.
   */
  export interface IWatchOptions {
    /**
     * Whether it shows the history (charts); the snapshot only otherwise.
     */
    history?: boolean;
  }
}

/**
 * The GPU monitor's model, shared by the panel, the status bar item, the
 * alerts and any other extension.
 */
export const IGpuMonitorModel = new Token<IGpuMonitorModel>(
  'jupyterlab-gpu-monitor:IGpuMonitorModel',
  'The GPU readings polled from the server extension: the latest snapshot and the recent history of every GPU.'
);
