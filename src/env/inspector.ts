import { ISessionContext } from '@jupyterlab/apputils';
import { INotebookModel } from '@jupyterlab/notebook';
import { Kernel, ServerConnection } from '@jupyterlab/services';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { diagnoseKernel, fetchProbeExpression } from '../api';
import {
  IEnvironmentFingerprint,
  IEnvironmentInspector,
  IGpuMonitorModel,
  IInspectionTarget,
  IKernelGpus,
  InspectionPhase,
  InspectorFinding,
  TRANSLATION_DOMAIN,
  METADATA_KEY
} from '../tokens';
import { IEnvironment } from '../restapi/envs';
import { IGpuSnapshot } from '../restapi/gpus';
import { IDiagnosis, IKernelProbe } from '../restapi/inspector';
import {
  EnvironmentCatalog,
  environmentOfPrefix,
  packageVersions
} from './catalog';
import { sortFindings } from './findings';
import { readFingerprint } from './fingerprintRecord';
import { kernelVisibleDevices, visibleGpuIndices } from './gpus';
import { FRAMEWORKS } from '../seed/frameworks';
import {
  IInspectionState,
  INITIAL_STATE,
  InspectionEvent,
  nextState
} from './inspection';
import { isPythonKernel, ProbeError, runProbe } from './probe';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * The server finding that the kernel left the environment the fingerprint
 * recorded: drift too, found by the server.
 */
const RECORDED_ENVIRONMENT_FINDING = 'kernel-not-in-recorded-environment';

/**
 * Follows one notebook or console at a time and inspects its kernel: first
 * what the server sees of its process (it answers while the kernel is busy,
 * for any language), then a silent probe in the kernel once it is idle. It
 * inspects again when the kernel changes or restarts, and compares the
 * kernel with the notebook's fingerprint.
 *
 * It asks nothing while nobody watches, unless the notebook has a
 * fingerprint: then every kernel start is checked for drift.
 */
export class EnvironmentInspector implements IEnvironmentInspector {
  /**
   * Create an inspector with no target.
   */
  constructor(options: EnvironmentInspector.IOptions) {
    this._serverSettings = options.serverSettings;
    this._gpuModel = options.gpuModel ?? null;
    this._trans = (options.translator ?? nullTranslator).load(
      TRANSLATION_DOMAIN
    );
    this.environments =
      options.environments ??
      new EnvironmentCatalog({ serverSettings: options.serverSettings });
    this._gpuModel?.changed.connect(this._updateKernelGpus, this);
  }

  /**
   * The server's environments.
   */
  readonly environments: EnvironmentCatalog;

  /**
   * Distributions the probe reports besides the defaults.
   */
  get packages(): readonly string[] {
    return this._packages;
  }
  set packages(names: readonly string[]) {
    this._packages = [...names];
  }

  /**
   * How long the probe may take, in seconds.
   */
  probeTimeoutSeconds: number = SETTINGS_DEFAULTS.inspector.probeTimeout;

  /**
   * How long a deep check (importing torch) may take, in seconds.
   */
  deepCheckTimeoutSeconds: number =
    SETTINGS_DEFAULTS.inspector.deepCheckTimeout;

  /**
   * The notebook or console inspected; null when there is none.
   */
  get target(): IInspectionTarget | null {
    return this._target;
  }

  /**
   * Where the inspection stands.
   */
  get phase(): InspectionPhase {
    return this._state.phase;
  }

  /**
   * Whether the probe running, or the last one, is a deep check.
   */
  get deep(): boolean {
    return this._deep;
  }

  /**
   * The server's report; null before it answers.
   */
  get report(): IDiagnosis | null {
    return this._report;
  }

  /**
   * The probe's answer; null before it answers or when it cannot.
   */
  get probe(): IKernelProbe | null {
    return this._probe;
  }

  /**
   * Why the probe or the server failed, for a person; null otherwise.
   */
  get error(): string | null {
    return this._error;
  }

  /**
   * The key packages' versions in the environment's records; null until read.
   */
  get serverPackages(): { [name: string]: string | null } | null {
    return this._serverPackages;
  }

  /**
   * The environment of the server's listing the kernel runs in.
   */
  get environment(): IEnvironment | null {
    return this._environment;
  }

  /**
   * The fingerprint the notebook recorded; null when it has none.
   */
  get fingerprint(): IEnvironmentFingerprint | null {
    return this._fingerprint;
  }

  /**
   * How the kernel differs from the fingerprint, as findings: the server's,
   * that it runs in another environment, and the packages, Python, build
   * and GPUs compared here.
   */
  get drift(): readonly InspectorFinding[] {
    return [
      ...(this._report?.findings ?? []).filter(
        finding => finding.id === RECORDED_ENVIRONMENT_FINDING
      ),
      ...this._drift
    ];
  }

  /**
   * The server's findings and the drift, errors first.
   */
  get findings(): readonly InspectorFinding[] {
    return sortFindings([...(this._report?.findings ?? []), ...this._drift]);
  }

  /**
   * Emitted when anything the inspector holds changes.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * The GPUs the kernel can see; null when unknown.
   */
  get kernelGpus(): IKernelGpus | null {
    return this._kernelGpus;
  }

  /**
   * Emitted when the GPUs the kernel can see change.
   */
  get kernelGpusChanged(): ISignal<this, IKernelGpus | null> {
    return this._kernelGpusChanged;
  }

  /**
   * Emitted once per kernel start when the kernel drifted from the
   * notebook's fingerprint.
   */
  get driftFound(): ISignal<this, readonly InspectorFinding[]> {
    return this._driftFound;
  }

  /**
   * Whether the inspector is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Follow another notebook or console; null for none.
   */
  setTarget(target: IInspectionTarget | null): void {
    if (target === this._target) {
      return;
    }
    if (this._target) {
      this._target.sessionContext.kernelChanged.disconnect(
        this._onKernelChanged,
        this
      );
      this._target.sessionContext.statusChanged.disconnect(
        this._onStatusChanged,
        this
      );
      this._target.notebook?.metadataChanged.disconnect(
        this._onMetadataChanged,
        this
      );
    }
    this._target = target;
    this._reset();
    this._fingerprint = target?.notebook
      ? readFingerprint(target.notebook)
      : null;
    if (target) {
      target.sessionContext.kernelChanged.connect(this._onKernelChanged, this);
      target.sessionContext.statusChanged.connect(this._onStatusChanged, this);
      target.notebook?.metadataChanged.connect(this._onMetadataChanged, this);
    }
    this._changed.emit();
    this._inspectIfWanted();
  }

  /**
   * Inspect the target's kernel while the returned disposable lives.
   */
  watch(): IDisposable {
    this._watchers++;
    this._inspectIfWanted();
    return new DisposableDelegate(() => {
      this._watchers--;
    });
  }

  /**
   * Ask the server and the kernel again. Resolves once the probe answered,
   * waits for an idle kernel, timed out or failed.
   */
  refresh(options: { deep?: boolean } = {}): Promise<void> {
    return this._inspect(options.deep ?? false);
  }

  /**
   * The environment as a fingerprint would record it now; null without a
   * probe answer.
   */
  async currentFingerprint(): Promise<IEnvironmentFingerprint | null> {
    if (this._probe === null) {
      return null;
    }
    const { makeFingerprint } = await import('./fingerprint');
    return makeFingerprint({
      probe: this._probe,
      environment: this._environment,
      snapshot: await this._gpuSnapshot(),
      torchCuda: this._report?.torch_cuda ?? null,
      now: new Date()
    });
  }

  /**
   * Stop following the target and disconnect every signal.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this.setTarget(null);
    this._isDisposed = true;
    Signal.clearData(this);
  }

  /**
   * Whether the target's kernel is inspected without being asked: when
   * someone watches, or the notebook has a fingerprint to check.
   */
  private get _wanted(): boolean {
    return this._watchers > 0 || this._fingerprint !== null;
  }

  /**
   * The id of the target's kernel; null without one.
   */
  private get _kernel(): Kernel.IKernelConnection | null {
    return this._target?.sessionContext.session?.kernel ?? null;
  }

  /**
   * Inspect the kernel if someone wants it and it was not inspected since it
   * started.
   */
  private _inspectIfWanted(): void {
    const kernel = this._kernel;
    if (this._wanted && kernel && this._inspectedKernel !== kernel.id) {
      void this._inspect(false);
    }
  }

  /**
   * Forget what was learnt about the previous kernel.
   */
  private _reset(): void {
    this._begin({ type: 'no-kernel' });
    this._deep = false;
    this._report = null;
    this._probe = null;
    this._error = null;
    this._serverPackages = null;
    this._environment = null;
    this._condaPackages = new Set();
    this._drift = [];
    this._pendingProbe = null;
    this._inspectedKernel = null;
    this._updateKernelGpus();
  }

  /**
   * Ask the server, then probe the kernel if it is a Python one and idle.
   */
  private async _inspect(deep: boolean): Promise<void> {
    const target = this._target;
    const kernel = this._kernel;
    this._pendingProbe = null;
    if (!target || !kernel) {
      this._begin({ type: 'no-kernel' });
      this._changed.emit();
      return;
    }
    const signal = this._begin({ type: 'start' });
    this._inspectedKernel = kernel.id;
    this._deep = deep;
    this._error = null;
    // A new inspection: the server is asked without the previous answer.
    this._probe = null;
    this._changed.emit();
    let report: IDiagnosis;
    try {
      report = await this._diagnose(kernel.id);
    } catch (error) {
      if (!signal.aborted) {
        this._fail(
          { type: 'server-failed' },
          this._trans.__(
            'The server could not inspect the kernel: %1',
            Private.messageOf(error)
          )
        );
      }
      return;
    }
    if (signal.aborted) {
      return;
    }
    this._report = report;
    await this._readEnvironment(report.prefix, signal);
    if (signal.aborted) {
      return;
    }
    this._updateKernelGpus();
    const python = await isPythonKernel(kernel).catch(() => true);
    if (signal.aborted) {
      return;
    }
    const idle = kernel.status === 'idle';
    this._send({ type: 'server-answered', python, idle });
    if (python && idle) {
      await this._runProbe(kernel, deep, signal);
      return;
    }
    if (python) {
      this._pendingProbe = { deep };
    }
    this._changed.emit();
  }

  /**
   * Probe the kernel (the inspection is probing), then ask the server again
   * with the answer.
   *
   * @param signal - aborted when a newer inspection begins
   */
  private async _runProbe(
    kernel: Kernel.IKernelConnection,
    deep: boolean,
    signal: AbortSignal
  ): Promise<void> {
    this._deep = deep;
    this._changed.emit();
    const timeoutSeconds = deep
      ? this.deepCheckTimeoutSeconds
      : this.probeTimeoutSeconds;
    let probe: IKernelProbe;
    try {
      const { expression } = await fetchProbeExpression(this._serverSettings, {
        deep,
        packages: this._packages
      });
      probe = await runProbe(kernel, expression, timeoutSeconds * 1000);
    } catch (error) {
      if (signal.aborted) {
        return;
      }
      if (error instanceof ProbeError && error.kind === 'timeout') {
        this._fail(
          { type: 'probe-timed-out' },
          this._trans.__(
            'The kernel did not answer the probe within %1 s.',
            timeoutSeconds
          )
        );
      } else if (error instanceof ProbeError && error.kind === 'unexpected') {
        this._fail(
          { type: 'probe-failed' },
          this._trans.__("The kernel's answer is not the probe's.")
        );
      } else {
        this._fail(
          { type: 'probe-failed' },
          this._trans.__('The probe failed: %1', Private.messageOf(error))
        );
      }
      return;
    }
    if (signal.aborted) {
      return;
    }
    this._probe = probe;
    // Should the server fail now, its first report stands beside the probe's
    // answer.
    const report = await this._diagnose(kernel.id).catch(() => this._report);
    if (signal.aborted) {
      return;
    }
    this._report = report;
    if (report?.prefix !== this._environment?.prefix) {
      await this._readEnvironment(report?.prefix ?? probe.prefix, signal);
    }
    await this._updateDrift(signal);
    if (signal.aborted) {
      return;
    }
    this._send({ type: 'probe-answered' });
    this._updateKernelGpus();
    this._changed.emit();
    this._announceDrift(kernel.id);
  }

  /**
   * The server's report on a kernel, with the probe's answer when there is
   * one and the environment the fingerprint recorded.
   */
  private _diagnose(kernelId: string): Promise<IDiagnosis> {
    const expected = this._fingerprint?.environment.prefix;
    return diagnoseKernel(this._serverSettings, {
      kernel_id: kernelId,
      probe: this._probe,
      ...(expected ? { expected_prefix: expected } : {})
    });
  }

  /**
   * Find the kernel's environment in the server's listing and read the
   * frameworks' versions from its records. A failure leaves them unknown.
   *
   * @param signal - aborted when a newer inspection begins: nothing is kept
   */
  private async _readEnvironment(
    prefix: string | null,
    signal: AbortSignal
  ): Promise<void> {
    await this.environments.load();
    if (signal.aborted) {
      return;
    }
    const environment = environmentOfPrefix(
      this.environments.environments ?? [],
      prefix
    );
    if (!environment) {
      this._environment = null;
      return;
    }
    const records = await this.environments
      .loadPackages(environment.id)
      .catch(() => null);
    if (signal.aborted) {
      return;
    }
    this._environment = environment;
    if (!records) {
      this._serverPackages = null;
      return;
    }
    this._serverPackages = packageVersions(records.packages, FRAMEWORKS);
    this._condaPackages = new Set(
      records.packages
        .filter(record => record.installer === 'conda')
        .map(record => record.name)
    );
  }

  /**
   * Compare the fingerprint with the kernel as the probe describes it.
   *
   * @param signal - aborted when a newer inspection begins: nothing is kept
   */
  private async _updateDrift(signal: AbortSignal): Promise<void> {
    const recorded = this._fingerprint;
    const current = recorded ? await this.currentFingerprint() : null;
    if (signal.aborted) {
      return;
    }
    if (!recorded || !current) {
      this._drift = [];
      return;
    }
    const { diffFingerprint, driftFindings } = await import('./fingerprint');
    if (signal.aborted) {
      return;
    }
    this._drift = driftFindings(
      diffFingerprint(recorded, current),
      recorded,
      this._trans,
      this._condaPackages,
      current.environment.prefix,
      this._environment?.manager ?? null
    );
  }

  /**
   * Tell who listens about the drift, once per kernel start.
   */
  private _announceDrift(kernelId: string): void {
    if (this._fingerprint === null || this._announced.has(kernelId)) {
      return;
    }
    this._announced.add(kernelId);
    const drift = this.drift;
    if (drift.length > 0) {
      this._driftFound.emit(drift);
    }
  }

  /**
   * Move the inspection on (see inspection.ts).
   */
  private _send(event: InspectionEvent): void {
    this._state = nextState(this._state, event);
  }

  /**
   * Begin a new inspection with its first event, and abort the previous one:
   * what that one still awaits would overwrite what this one learns.
   *
   * @returns the new inspection's signal, for each of its async steps
   */
  private _begin(
    event: Extract<
      InspectionEvent,
      { type: 'start' | 'no-kernel' | 'restarting' }
    >
  ): AbortSignal {
    this._inspection.abort();
    this._inspection = new AbortController();
    this._send(event);
    return this._inspection.signal;
  }

  /**
   * End the inspection with a failure, and why.
   */
  private _fail(event: InspectionEvent, message: string): void {
    this._send(event);
    this._error = message;
    this._changed.emit();
  }

  /**
   * The GPUs now: the GPU model's snapshot, asked for when it has none.
   */
  private async _gpuSnapshot(): Promise<IGpuSnapshot | null> {
    const model = this._gpuModel;
    if (!model) {
      return null;
    }
    if (model.snapshot === null) {
      await model.read().catch(() => {
        // No GPU reading: the fingerprint says so.
      });
    }
    return model.snapshot;
  }

  /**
   * Work out which GPUs the kernel can see: from the probe's
   * `CUDA_VISIBLE_DEVICES`, else from the one the kernel started with; tell
   * who listens when they change.
   */
  private _updateKernelGpus(): void {
    const visibleDevices = kernelVisibleDevices(this._probe, this._report);
    const snapshot = this._gpuModel?.snapshot ?? null;
    const gpus =
      this._target && visibleDevices !== undefined && snapshot
        ? {
            label: this._target.label,
            indices: visibleGpuIndices(visibleDevices, snapshot)
          }
        : null;
    const known = this._kernelGpus;
    if (
      gpus?.label !== known?.label ||
      gpus?.indices.join() !== known?.indices.join()
    ) {
      this._kernelGpus = gpus;
      this._kernelGpusChanged.emit(gpus);
    }
  }

  /**
   * A new kernel: inspect it.
   */
  private _onKernelChanged(): void {
    this._reset();
    this._changed.emit();
    this._inspectIfWanted();
  }

  /**
   * A restart makes the kernel new; an idle kernel gets the probe that
   * waited for it.
   */
  private _onStatusChanged(_: ISessionContext, status: Kernel.Status): void {
    const kernel = this._kernel;
    if (!kernel) {
      return;
    }
    if (status === 'restarting' || status === 'autorestarting') {
      this._announced.delete(kernel.id);
      this._inspectedKernel = null;
      this._begin({ type: 'restarting' });
      this._pendingProbe = null;
      this._probe = null;
      this._changed.emit();
    } else if (status === 'idle') {
      if (this._inspectedKernel !== kernel.id) {
        this._inspectIfWanted();
      } else if (this._pendingProbe) {
        const { deep } = this._pendingProbe;
        this._pendingProbe = null;
        // The probe belongs to the inspection that waited for the kernel.
        this._send({ type: 'kernel-idle' });
        void this._runProbe(kernel, deep, this._inspection.signal);
      }
    }
  }

  /**
   * The fingerprint may have changed: compare again, and ask the server
   * again with the environment it records.
   */
  private _onMetadataChanged(
    notebook: INotebookModel,
    change: { key: string }
  ): void {
    if (change.key !== METADATA_KEY) {
      return;
    }
    const fingerprint = readFingerprint(notebook);
    if (JSON.stringify(fingerprint) === JSON.stringify(this._fingerprint)) {
      return;
    }
    this._fingerprint = fingerprint;
    const kernel = this._kernel;
    if (this._probe && kernel) {
      const { signal } = this._inspection;
      void Promise.all([
        this._diagnose(kernel.id).then(
          report => {
            if (!signal.aborted) {
              this._report = report;
            }
          },
          () => undefined
        ),
        this._updateDrift(signal)
      ]).then(() => {
        if (signal.aborted) {
          // The newer inspection compares and tells the drift itself.
          return;
        }
        this._changed.emit();
        // A fingerprint read after the probe answered (a notebook still
        // loading) is checked as at the kernel's start.
        this._announceDrift(kernel.id);
      });
    } else {
      this._changed.emit();
      this._inspectIfWanted();
    }
  }

  private _serverSettings: ServerConnection.ISettings;
  private _gpuModel: IGpuMonitorModel | null;
  private _trans: TranslationBundle;
  private _packages: string[] = [];
  private _target: IInspectionTarget | null = null;
  private _watchers = 0;
  private _state: IInspectionState = INITIAL_STATE;
  // Aborted when a newer inspection begins; the probe that waits for an idle
  // kernel and a re-comparison of the fingerprint join the current one.
  private _inspection = new AbortController();
  private _kernelGpus: IKernelGpus | null = null;
  private _kernelGpusChanged = new Signal<this, IKernelGpus | null>(this);
  private _deep = false;
  private _report: IDiagnosis | null = null;
  private _probe: IKernelProbe | null = null;
  private _error: string | null = null;
  private _serverPackages: { [name: string]: string | null } | null = null;
  private _environment: IEnvironment | null = null;
  private _condaPackages: ReadonlySet<string> = new Set();
  private _fingerprint: IEnvironmentFingerprint | null = null;
  private _drift: InspectorFinding[] = [];
  private _pendingProbe: { deep: boolean } | null = null;
  private _inspectedKernel: string | null = null;
  private _announced = new Set<string>();
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _driftFound = new Signal<this, readonly InspectorFinding[]>(this);
}

/**
 * The types of {@link EnvironmentInspector}.
 */
export namespace EnvironmentInspector {
  /**
   * What the inspector needs.
   */
  export interface IOptions {
    /**
     * The connection settings of the Jupyter server.
     */
    serverSettings: ServerConnection.ISettings;
    /**
     * The GPU model: its snapshot goes into fingerprints, and it is told which
     * GPUs the kernel can see.
     */
    gpuModel?: IGpuMonitorModel | null;
    /**
     * The catalog of environments; one of its own otherwise.
     */
    environments?: EnvironmentCatalog;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * What an error says.
   */
  export function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
  }
}
