/**
 * Interfaces, command ids and the REST payload types of the GPU monitor.
 *
 * The payload types mirror the JSON the Python server extension returns; their
 * snake_case keys are the wire contract and are kept as they are.
 */

import { ISessionContext } from '@jupyterlab/apputils';
import { INotebookModel } from '@jupyterlab/notebook';
import { Token } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

/**
 * The gettext domain of every string this extension shows.
 */
export const TRANSLATION_DOMAIN = 'jupyterlab_gpu_monitor';

/**
 * The metadata key the extension keeps its records under: a notebook's
 * `environment` (the fingerprint), a cell's `last_run` and
 * `reproducibility`.
 */
export const METADATA_KEY = 'gpu_monitor';

/**
 * The ids of every command this extension registers.
 */
export namespace CommandIDs {
  /**
   * Show the Environment side panel: the current kernel's environment.
   */
  export const openEnvironmentPanel = 'gpu-monitor:open-environment';
  /**
   * Ask the server and the current kernel about its environment again.
   */
  export const refreshEnvironment = 'gpu-monitor:refresh-environment';
  /**
   * Probe the current kernel importing torch, to ask it about CUDA.
   */
  export const deepCheck = 'gpu-monitor:deep-check';
  /**
   * Insert (or replace) the reproducibility cell at the top of the notebook.
   */
  export const insertReproducibilityCell =
    'gpu-monitor:insert-reproducibility-cell';
  /**
   * Record the kernel's environment in the notebook's metadata.
   */
  export const recordEnvironment = 'gpu-monitor:record-environment';
  /**
   * Write the kernel's environment.yml into the notebook's folder.
   */
  export const exportEnvironmentFile = 'gpu-monitor:export-environment-file';
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
  /**
   * Interrupt one of this server's kernels, after a confirmation.
   */
  export const interruptKernel = 'gpu-monitor:interrupt-kernel';
  /**
   * Shut down one of this server's kernels, after a confirmation.
   */
  export const shutDownKernel = 'gpu-monitor:shut-down-kernel';
  /**
   * Insert a first cell that makes a notebook's kernel use given GPUs (the
   * least used one by default): `CUDA_VISIBLE_DEVICES`.
   */
  export const useGpu = 'gpu-monitor:use-gpu';
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
   * The process name (its command); null for another user's process unless
   * the server is configured to send it.
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
   * Whether the process exists in the server's PID namespace; false when the
   * driver reports a pid of another namespace (a container), null when not
   * joined. An invisible process has no user, start, kernel or name.
   */
  visible: boolean | null;
  /**
   * The user the process runs as.
   */
  user: string | null;
  /**
   * When the process started, in seconds since the epoch.
   */
  started: number | null;
  /**
   * Whether the process runs as the user this server runs as.
   */
  own: boolean | null;
  /**
   * The kernel of this server the process is, or descends from.
   */
  kernel_id: string | null;
  /**
   * The notebook (or console) whose kernel runs the process.
   */
  session_path: string | null;
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
   * How many processes of this read are not in `processes`: a read keeps the
   * 256 that hold the most memory on a GPU.
   */
  processes_omitted: number;
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
 * The memory a kernel holds on one GPU, in `GET /gpu-monitor/api/kernels`.
 */
export interface IKernelGpuUsage {
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
   * The memory the kernel's processes hold on this GPU, in MiB.
   */
  memory_used_mib: number;
  /**
   * The GPU's utilisation, in percent.
   */
  utilization_gpu: number | null;
}

/**
 * One of this server's kernels and the GPU memory it holds (its process and
 * descendants): an item of `GET /gpu-monitor/api/kernels`.
 */
export interface IKernelSummary {
  /**
   * The kernel id.
   */
  kernel_id: string;
  /**
   * The kernelspec name.
   */
  name: string;
  /**
   * The kernel's process id; null for a remote kernel.
   */
  pid: number | null;
  /**
   * Whether the kernel runs elsewhere (a gateway), out of the server's sight.
   */
  remote: boolean;
  /**
   * `idle`, `busy`, `starting`… as the kernel manager last saw it.
   */
  execution_state: string | null;
  /**
   * The notebook or console the kernel serves; null without a session.
   */
  session_path: string | null;
  /**
   * `notebook` or `console`; null without a session.
   */
  session_type: string | null;
  /**
   * The GPU memory the kernel holds on all GPUs, in MiB.
   */
  memory_used_mib: number;
  /**
   * The GPUs it holds memory on.
   */
  gpus: IKernelGpuUsage[];
}

/**
 * A kernel's figures on one GPU over a span of time.
 */
export interface ISpanGpuFigures {
  /**
   * The GPU index.
   */
  index: number;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * The most memory the kernel held on this GPU during the span, in MiB.
   */
  peak_memory_mib: number;
  /**
   * The GPU's mean utilisation during the span, in percent.
   */
  mean_utilization: number | null;
  /**
   * The GPU's highest utilisation during the span, in percent.
   */
  peak_utilization: number | null;
}

/**
 * A kernel's GPU figures over one span of time (a cell's run), from the
 * server's full-resolution history: an item of the answer of
 * `POST /gpu-monitor/api/kernels/<id>/spans`.
 */
export interface ISpanFigures {
  /**
   * The span's start, in seconds since the epoch.
   */
  start: number;
  /**
   * The span's end, in seconds since the epoch.
   */
  end: number;
  /**
   * The span's length, in seconds.
   */
  duration_seconds: number;
  /**
   * How many server reads fall inside the span.
   */
  samples: number;
  /**
   * Whether the span is shorter than two reads: then there are no figures.
   */
  too_short: boolean;
  /**
   * Whether the server did not read the GPUs during part of the span.
   */
  gap: boolean;
  /**
   * The most memory the kernel held on all GPUs at one read, in MiB; null
   * when it held none or the span was not measured.
   */
  peak_memory_mib: number | null;
  /**
   * The mean utilisation of the GPUs the kernel held memory on, in percent.
   */
  mean_utilization: number | null;
  /**
   * The highest utilisation of those GPUs, in percent.
   */
  peak_utilization: number | null;
  /**
   * The GPUs the kernel held memory on during the span.
   */
  gpus: ISpanGpuFigures[];
}

/**
 * The body of `POST /gpu-monitor/api/kernels/<id>/spans`.
 */
export interface ISpansAnswer {
  /**
   * The time between two server reads, in seconds.
   */
  interval_seconds: number;
  /**
   * The figures of each span asked for, in order.
   */
  spans: ISpanFigures[];
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
   * This server's kernels, most GPU memory first; null until a watcher asks
   * for them and the server answers.
   */
  readonly kernels: readonly IKernelSummary[] | null;
  /**
   * Ask the model to poll until the returned disposable is disposed; with no
   * watcher left, it stops asking the server.
   */
  watch(options?: IGpuMonitorModel.IWatchOptions): IDisposable;
  /**
   * Ask the server now, if someone watches; resolves once the answer is in
   * the model.
   */
  refresh(): Promise<void>;
  /**
   * Ask the server now even if nobody watches: one answer for one use.
   */
  read(): Promise<void>;
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
    /**
     * Whether it shows this server's kernels and the GPU memory they hold.
     */
    kernels?: boolean;
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

/**
 * The body of `GET /gpu-monitor/api/probe`: the kernel probe as one Python
 * expression, for a silent execute's `user_expressions`.
 */
export interface IProbeExpression {
  /**
   * The expression; its value's repr is the probe's JSON answer.
   */
  expression: string;
  /**
   * Whether it imports torch to ask it about CUDA.
   */
  deep: boolean;
}

/**
 * What the probe learnt from torch: only when the user had imported it or a
 * deep check imported it.
 */
export interface ITorchFacts {
  /**
   * `torch.__version__`, e.g. `2.13.0+cpu`.
   */
  version: string | null;
  /**
   * The CUDA version torch is built for; null for a CPU-only build.
   */
  cuda?: string | null;
  /**
   * `torch.cuda.is_available()`.
   */
  cuda_available?: boolean;
  /**
   * `torch.cuda.is_initialized()`: whether the kernel already made a CUDA
   * context, after which CUDA's environment variables no longer apply.
   */
  cuda_initialized?: boolean;
  /**
   * How many GPUs torch sees.
   */
  device_count?: number;
  /**
   * The names of the GPUs torch sees, in its order.
   */
  devices?: string[];
  /**
   * The cuDNN version, e.g. 90100; null without CUDA.
   */
  cudnn?: number | null;
  /**
   * Whether the probe imported torch (a deep check) rather than the user.
   */
  imported_by_probe?: boolean;
  /**
   * Why `import torch` failed, when it did.
   */
  import_error?: string;
  /**
   * Why asking torch about CUDA failed, when it did.
   */
  error?: string;
}

/**
 * The kernel probe's answer: the kernel's own view of its environment.
 */
export interface IKernelProbe {
  /**
   * `sys.executable`.
   */
  executable: string;
  /**
   * `sys.prefix`: the environment the kernel runs in.
   */
  prefix: string;
  /**
   * `sys.base_prefix`: the Python a venv was made from.
   */
  base_prefix: string;
  /**
   * The Python version, e.g. `3.11.7`.
   */
  python_version: string;
  /**
   * The Python implementation, e.g. `CPython`.
   */
  implementation: string;
  /**
   * `CONDA_DEFAULT_ENV` in the kernel.
   */
  conda_default_env: string | null;
  /**
   * `CONDA_PREFIX` in the kernel.
   */
  conda_prefix: string | null;
  /**
   * `VIRTUAL_ENV` in the kernel.
   */
  virtual_env: string | null;
  /**
   * `CUDA_VISIBLE_DEVICES` in the kernel now; null when it is not set.
   */
  cuda_visible_devices: string | null;
  /**
   * The version of each package asked about; null when not installed.
   */
  packages: { [name: string]: string | null };
  /**
   * What torch says, when it is imported; null otherwise.
   */
  torch: ITorchFacts | null;
  /**
   * Whether this was a deep check (torch imported to ask it).
   */
  deep: boolean;
}

/**
 * How bad a finding is.
 */
export type FindingSeverity = 'error' | 'warning' | 'info';

/**
 * One problem found in a kernel's environment, how it was found, and the
 * command or code that fixes it.
 */
export interface IFinding {
  /**
   * A stable id of the rule, e.g. `cpu-only-torch`.
   */
  id: string;
  /**
   * How bad it is.
   */
  severity: FindingSeverity;
  /**
   * What is wrong, in one line.
   */
  title: string;
  /**
   * The facts that show it.
   */
  evidence: string;
  /**
   * The command or code that fixes it; empty when there is none to run.
   */
  fix: string;
}

/**
 * What the server reads of a kernel's process, without a round trip.
 */
export interface IKernelProcess {
  /**
   * The kernel's process id.
   */
  pid: number;
  /**
   * The interpreter the kernel was launched with.
   */
  interpreter: string | null;
  /**
   * `/proc/<pid>/exe`: the binary, symlinks resolved.
   */
  executable: string | null;
  /**
   * The environment the interpreter belongs to.
   */
  prefix: string | null;
  /**
   * `conda`, `venv` or `system`.
   */
  env_kind: 'conda' | 'venv' | 'system' | null;
  /**
   * The variables the kernel started with: `CUDA_VISIBLE_DEVICES`,
   * `CONDA_PREFIX`, `CONDA_DEFAULT_ENV`, `VIRTUAL_ENV`, `LD_LIBRARY_PATH`.
   */
  variables: { [name: string]: string | null };
  /**
   * False when the process could not be read (another user's, or gone).
   */
  readable: boolean;
}

/**
 * The body of `POST /gpu-monitor/api/diagnose`: what the server sees of a
 * kernel, completed by the probe's answer when one was sent, and the
 * findings, errors first.
 */
export interface IDiagnosis {
  /**
   * The kernel id.
   */
  kernel_id: string;
  /**
   * The kernelspec name.
   */
  kernelspec: string | null;
  /**
   * Whether the kernel has no local process (a gateway's kernel).
   */
  remote: boolean;
  /**
   * The kernel's process; null for a remote kernel.
   */
  process: IKernelProcess | null;
  /**
   * The environment the kernel runs in.
   */
  prefix: string | null;
  /**
   * Which sources answered: the server (always), the probe (when sent).
   */
  sources: { server: boolean; probe: boolean };
  /**
   * What is wrong, errors first.
   */
  findings: IFinding[];
}

/**
 * The kind of an environment.
 */
export type EnvironmentKind = 'conda-root' | 'conda-env' | 'venv';

/**
 * A conda environment, or a venv a kernelspec launches: an item of
 * `GET /gpu-monitor/api/envs`.
 */
export interface IEnvironment {
  /**
   * Its name in URLs: the name, or the name and a hash when names clash.
   */
  id: string;
  /**
   * Its name.
   */
  name: string;
  /**
   * Its folder.
   */
  prefix: string;
  /**
   * Its kind.
   */
  kind: EnvironmentKind;
  /**
   * The tool that made it: conda, mamba, micromamba, pixi, venv, uv…
   */
  manager: string;
  /**
   * The version of its Python.
   */
  python_version: string | null;
  /**
   * How many packages it holds.
   */
  package_count: number;
  /**
   * The kernelspecs that launch it.
   */
  kernelspecs: string[];
  /**
   * When conda last changed it, in seconds since the epoch; null for a venv.
   */
  modified: number | null;
}

/**
 * The body of `GET /gpu-monitor/api/envs`.
 */
export interface IEnvironmentList {
  /**
   * Every environment found.
   */
  environments: IEnvironment[];
  /**
   * Their prefixes, as `conda env list --json` lists them.
   */
  envs: string[];
}

/**
 * One installed package of an environment.
 */
export interface IPackageRecord {
  /**
   * The package name.
   */
  name: string;
  /**
   * Its version.
   */
  version: string;
  /**
   * Its conda build string; empty for a pip package.
   */
  build: string;
  /**
   * Its channel; `pypi` for a pip package.
   */
  channel: string;
  /**
   * Who installed it.
   */
  installer: 'conda' | 'pip';
  /**
   * On a pip package: the conda package that installed the same files.
   */
  conda_name: string | null;
}

/**
 * The body of `GET /gpu-monitor/api/envs/<id>`.
 */
export interface IEnvironmentPackages {
  /**
   * The environment.
   */
  environment: IEnvironment;
  /**
   * Its packages.
   */
  packages: IPackageRecord[];
}

/**
 * The styles of environment.yml the server exports.
 */
export type EnvironmentFileStyle = 'no-builds' | 'from-history' | 'with-builds';

/**
 * A notebook's record of the environment it ran in, kept in its metadata
 * under `gpu_monitor.environment`.
 */
export interface IEnvironmentFingerprint {
  /**
   * When it was recorded, as an ISO 8601 date.
   */
  recorded: string;
  /**
   * The environment: its name, folder and kind.
   */
  environment: {
    name: string | null;
    prefix: string;
    kind: string | null;
  };
  /**
   * The Python version and implementation.
   */
  python: { version: string; implementation: string };
  /**
   * The versions of the key packages; null for one not installed.
   */
  packages: { [name: string]: string | null };
  /**
   * The CUDA version torch is built for, `cpu` for a CPU-only build; null
   * when torch is not installed or its build is unknown.
   */
  torch_cuda: string | null;
  /**
   * The driver, its CUDA version and the GPUs the kernel could see; null
   * when no GPU could be read.
   */
  gpus: {
    driver_version: string | null;
    cuda_version: string | null;
    names: string[];
  } | null;
}

/**
 * Where the inspection of the current kernel stands.
 *
 * - `no-kernel`: no notebook or console, or one without a kernel
 * - `server`: asking the server what it sees of the kernel
 * - `waiting`: the kernel is busy or starting; it is probed once idle
 * - `probing`: the probe runs in the kernel
 * - `probed`: the probe answered
 * - `no-probe`: the kernel's language has no in-kernel probe
 * - `timeout`: the probe did not answer in time
 * - `failed`: the probe or the server failed; see `error`
 */
export type InspectionPhase =
  | 'no-kernel'
  | 'server'
  | 'waiting'
  | 'probing'
  | 'probed'
  | 'no-probe'
  | 'timeout'
  | 'failed';

/**
 * A notebook or console whose kernel is inspected.
 */
export interface IInspectionTarget {
  /**
   * Its name, for a person.
   */
  label: string;
  /**
   * Its session, which holds the kernel.
   */
  sessionContext: ISessionContext;
  /**
   * The notebook's model, which holds the fingerprint; null for a console.
   */
  notebook: INotebookModel | null;
}

/**
 * The inspector of the current kernel's environment: what the server sees
 * of its process, what the kernel itself answers to a silent probe, the
 * findings, and the notebook's fingerprint and how the kernel drifted from it.
 */
export interface IEnvironmentInspector extends IDisposable {
  /**
   * The notebook or console inspected; null when there is none.
   */
  readonly target: IInspectionTarget | null;
  /**
   * Where the inspection stands.
   */
  readonly phase: InspectionPhase;
  /**
   * Whether the probe running, or the last one, is a deep check.
   */
  readonly deep: boolean;
  /**
   * The server's report; null before it answers.
   */
  readonly report: IDiagnosis | null;
  /**
   * The probe's answer; null before it answers or when it cannot.
   */
  readonly probe: IKernelProbe | null;
  /**
   * Why the probe or the server failed, for a person; null otherwise.
   */
  readonly error: string | null;
  /**
   * The versions of the frameworks the panel and the reproducibility cell
   * look for (numpy, torch, tensorflow, jax) as the server reads them from
   * the environment's records; null until read. Used while there is no
   * probe, whose answer holds every key package.
   */
  readonly serverPackages: { [name: string]: string | null } | null;
  /**
   * The environment of the server's listing the kernel runs in.
   */
  readonly environment: IEnvironment | null;
  /**
   * The fingerprint the notebook recorded; null when it has none.
   */
  readonly fingerprint: IEnvironmentFingerprint | null;
  /**
   * How the kernel differs from the fingerprint, as findings.
   */
  readonly drift: readonly IFinding[];
  /**
   * The server's findings and the drift, errors first.
   */
  readonly findings: readonly IFinding[];
  /**
   * The server's environments, for the environments table.
   */
  readonly environments: IEnvironmentCatalog;
  /**
   * Emitted when anything above changes.
   */
  readonly changed: ISignal<IEnvironmentInspector, void>;
  /**
   * Emitted once per kernel start when the kernel drifted from the
   * notebook's fingerprint, with the drift.
   */
  readonly driftFound: ISignal<IEnvironmentInspector, readonly IFinding[]>;
  /**
   * Inspect the target's kernel while the returned disposable lives; without
   * a watcher, only a notebook with a fingerprint is inspected.
   */
  watch(): IDisposable;
  /**
   * Ask the server and the kernel again. Resolves once the probe answered,
   * waits for an idle kernel, timed out or failed.
   *
   * @param options.deep - whether the probe imports torch (a deep check)
   */
  refresh(options?: { deep?: boolean }): Promise<void>;
  /**
   * The environment as a fingerprint would record it now; null without a
   * probe answer.
   */
  currentFingerprint(): Promise<IEnvironmentFingerprint | null>;
}

/**
 * The environment inspector of the current notebook or console.
 */
export const IEnvironmentInspector = new Token<IEnvironmentInspector>(
  'jupyterlab-gpu-monitor:IEnvironmentInspector',
  "The current kernel's environment as the server and an in-kernel probe see it, the findings with their fixes, and the notebook's environment fingerprint."
);

/**
 * The server's environments, loaded when first asked for.
 */
export interface IEnvironmentCatalog {
  /**
   * The environments; null before they are loaded.
   */
  readonly environments: readonly IEnvironment[] | null;
  /**
   * Why loading failed; null otherwise.
   */
  readonly failure: IRequestFailure | null;
  /**
   * Emitted when the environments or a package list arrive.
   */
  readonly changed: ISignal<IEnvironmentCatalog, void>;
  /**
   * Load the environments, once; again when `reload`.
   */
  load(reload?: boolean): Promise<void>;
  /**
   * The packages of an environment, once loaded; undefined before.
   */
  packagesOf(id: string): IEnvironmentPackages | undefined;
  /**
   * Load the packages of an environment, once.
   */
  loadPackages(id: string): Promise<IEnvironmentPackages>;
  /**
   * The environment.yml of an environment, in a style.
   */
  exportFile(id: string, style: EnvironmentFileStyle): Promise<string>;
}

/**
 * One run of a code cell, timed by the kernel's own messages, with the
 * kernel's GPU figures over it once the server has given them.
 */
export interface ICellRun {
  /**
   * The id of the cell that ran (nbformat 4.5).
   */
  readonly cellId: string;
  /**
   * The execution count the kernel gave the run; null when it gave none.
   */
  readonly executionCount: number | null;
  /**
   * The first line of the code that ran, that is not blank.
   */
  readonly firstLine: string;
  /**
   * When it started (`execute_input`), in seconds since the epoch.
   */
  readonly start: number;
  /**
   * When it ended (the `status: idle` answering it), in seconds since the
   * epoch.
   */
  readonly end: number;
  /**
   * The kernel's GPU figures over the run; null until the server has
   * answered, or when it could not.
   */
  readonly figures: ISpanFigures | null;
}

/**
 * What a notebook needed of a GPU at its peak, from the records its cells
 * keep of their last runs.
 */
export interface INotebookGpuNeed {
  /**
   * The most memory its kernel held at once, on all GPUs, in MiB.
   */
  peakMemoryMiB: number;
  /**
   * How many GPUs that memory was spread over.
   */
  gpuCount: number;
  /**
   * The GPU it ran on; null when not recorded.
   */
  gpuName: string | null;
  /**
   * When that run was, as an ISO 8601 date; null when not recorded.
   */
  date: string | null;
}

/**
 * The cell runs of one open notebook and what it needs of a GPU.
 */
export interface INotebookGpuRuns {
  /**
   * The notebook's path on the server.
   */
  readonly path: string;
  /**
   * Its kernel's id; null without a kernel.
   */
  readonly kernelId: string | null;
  /**
   * Its cells' runs since it was opened, oldest first.
   */
  readonly runs: readonly ICellRun[];
  /**
   * Grows by one each time a run is added or gets its figures.
   */
  readonly revision: number;
  /**
   * What it needed at its peak, as its cells recorded; null without records.
   */
  readonly need: INotebookGpuNeed | null;
}

/**
 * Which cell used the GPU: the cell runs of the current notebook, for the
 * panel's charts and its "will this notebook fit?" line.
 */
export interface ICellGpuRuns {
  /**
   * The current notebook's runs; null when no notebook is current.
   */
  readonly current: INotebookGpuRuns | null;
  /**
   * Emitted when the current notebook changes, or its runs or need do.
   */
  readonly changed: ISignal<ICellGpuRuns, void>;
  /**
   * Show the current notebook and scroll it to a cell.
   */
  revealCell(cellId: string): void;
}

/**
 * The cell runs of the current notebook and their GPU figures, provided by
 * the per-cell attribution plugin.
 */
export const ICellGpuRuns = new Token<ICellGpuRuns>(
  'jupyterlab-gpu-monitor:ICellGpuRuns',
  "The current notebook's cell runs (from the kernel's execute_input to its idle) with the kernel's GPU figures over each, and the notebook's recorded peak GPU need."
);
