/**
 * The tokens, command ids and the frontend's own interfaces of the GPU
 * monitor. The REST payload types are generated from the server's JSON
 * Schemas into `restapi/`.
 */

import { ISessionContext } from '@jupyterlab/apputils';
import { INotebookModel } from '@jupyterlab/notebook';
import { Token } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

import {
  EnvironmentFileStyle,
  IEnvironment,
  IEnvironmentPackages,
  IUnreadableEnvironment
} from './restapi/envs';
import { HistoryField } from './gpu/readings';
import {
  IGpuSnapshot,
  ILabLedger,
  ILabView,
  IMachineSeries
} from './restapi/gpus';
import { IDiagnosis, IFinding, IKernelProbe } from './restapi/inspector';
import { IKernelSummary, ISpanFigures } from './restapi/kernels';

/**
 * The gettext domain of every string this extension shows.
 */
export const TRANSLATION_DOMAIN = 'jupyterlab_gpu_monitor';

/**
 * The id of the panel plugin, whose settings (schema/panel.json) the free-GPU
 * command follows too.
 */
export const PANEL_PLUGIN_ID = 'jupyterlab-gpu-monitor:panel';

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
   * Open the GPU dashboard in the main area: every chart at full size.
   */
  export const openDashboard = 'gpu-monitor:open-dashboard';
  /**
   * Open the GPU Lab in the main area: every machine of the lab.
   */
  export const openLab = 'gpu-monitor:open-lab';
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
   * Release the GPU memory torch caches in one of this server's idle kernels.
   */
  export const releaseCachedMemory = 'gpu-monitor:release-cached-memory';
  /**
   * Insert a first cell that makes a notebook's kernel use given GPUs (the
   * least used one by default): `CUDA_VISIBLE_DEVICES`.
   */
  export const useGpu = 'gpu-monitor:use-gpu';
}

/**
 * A measurement the frontend keeps a history of (one the server's history
 * keeps), named as in the REST payload.
 */
export type GpuSeriesField = Extract<
  HistoryField,
  | 'utilization_gpu'
  | 'memory_used_mib'
  | 'temperature_c'
  | 'power_draw_w'
  | 'pcie_received_bytes_per_second'
  | 'nvlink_received_bytes_per_second'
>;

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
   * The machine's columns, null where a reading has none.
   */
  readonly machine: Readonly<IMachineSeries>;
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
   * The latest snapshot that had GPUs to show; null until one has.
   */
  readonly lastReadings: IGpuSnapshot | null;
  /**
   * When the server was last asked, in milliseconds since the epoch; null
   * before the first answer.
   */
  readonly lastTried: number | null;
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
   * How often it asks while only seldom watchers watch (no chart, panel or
   * dashboard shown), in seconds.
   */
  seldomIntervalSeconds: number;
  /**
   * How often it asks now, in seconds.
   */
  readonly askingEverySeconds: number;
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
    /**
     * Whether a reading every few seconds is enough for it (the status bar,
     * the alerts): while only such watchers watch, the model asks every
     * `seldomIntervalSeconds` and the server reads only then.
     */
    seldom?: boolean;
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
 * Every machine of the lab, read from the server's `GET lab` while a Lab
 * view is watched.
 */
export interface ILabModel extends IDisposable {
  /**
   * The latest view; null before the first answer.
   */
  readonly view: ILabView | null;
  /**
   * Why the latest request to this server failed; null when it succeeded.
   * (The lab's Prometheus failing is the view's own `error`.)
   */
  readonly failure: IRequestFailure | null;
  /**
   * Whether the server names a lab's Prometheus; null until it answered
   * once. A server without one is not asked again.
   */
  readonly configured: boolean | null;
  /**
   * Emitted after each answer, or failure.
   */
  readonly changed: ISignal<ILabModel, void>;
  /**
   * Each notebook's GPU-hours over the last `ledgerSeconds`; null until a
   * watcher asked for it and the server answered.
   */
  readonly ledger: ILabLedger | null;
  /**
   * The ledger's period, in seconds (whole hours); a change asks at once.
   */
  ledgerSeconds: number;
  /**
   * Ask the server every few seconds until the returned disposable is
   * disposed, for the ledger too when asked; the first watcher is answered
   * at once.
   */
  watch(options?: { ledger?: boolean }): IDisposable;
}

/**
 * The lab's machines, polled while a Lab view is shown.
 */
export const ILabModel = new Token<ILabModel>(
  'jupyterlab-gpu-monitor:ILabModel',
  "Every machine of the lab (GET lab), from the lab's Prometheus, polled while a Lab view is watched."
);

/**
 * The ids of the findings the frontend makes itself: how the running kernel
 * differs from the notebook's fingerprint.
 */
export type DriftFindingId =
  | 'drift-python'
  | `drift-package-${string}`
  | 'drift-torch-cuda'
  | 'drift-gpus'
  | 'drift-driver';

/**
 * A drift from the notebook's fingerprint, told as a finding.
 */
export interface IDriftFinding extends Omit<IFinding, 'id'> {
  /**
   * Which drift it is.
   */
  id: DriftFindingId;
}

/**
 * A finding the inspector shows: one of the server's diagnoses, or a drift
 * the frontend found.
 */
export type InspectorFinding = IFinding | IDriftFinding;

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
  readonly drift: readonly InspectorFinding[];
  /**
   * The server's findings and the drift, errors first.
   */
  readonly findings: readonly InspectorFinding[];
  /**
   * The server's environments, for the environments table.
   */
  readonly environments: IEnvironmentCatalog;
  /**
   * Emitted when anything above changes.
   */
  readonly changed: ISignal<IEnvironmentInspector, void>;
  /**
   * The GPUs the kernel can see, from the probe's `CUDA_VISIBLE_DEVICES`,
   * else from the one it started with; null when unknown.
   */
  readonly kernelGpus: IKernelGpus | null;
  /**
   * Emitted when the GPUs the kernel can see change, with them.
   */
  readonly kernelGpusChanged: ISignal<
    IEnvironmentInspector,
    IKernelGpus | null
  >;
  /**
   * Emitted once per kernel start when the kernel drifted from the
   * notebook's fingerprint, with the drift.
   */
  readonly driftFound: ISignal<
    IEnvironmentInspector,
    readonly InspectorFinding[]
  >;
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
   * The folders the server could not read as environments (files that did
   * not answer in time, a path that is not UTF-8), each with why.
   */
  readonly unreadable: readonly IUnreadableEnvironment[];
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
   * Whether the environment was deleted since it was listed: the server no
   * longer has it (the listing is then read again, without it).
   */
  isGone(id: string): boolean;
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
   * The most memory it held on each of those GPUs, in MiB, in the order of
   * their indices (the first is the one its `cuda:0` was): GPU 0 often
   * holds more than the others. Split evenly for a record that predates it.
   */
  perGpuMiB: number[];
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
