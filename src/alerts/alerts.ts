import { ClockThrottleReason, IGpu, IGpuSnapshot } from '../restapi/gpus';
import { IRequestFailure } from '../tokens';
import { HELD_MEMORY_MIB } from '../restapi/rules';
import { SLOWING_REASONS } from '../gpu/slowingReasons';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * When to raise alerts; the properties of the alerts plugin's settings.
 */
export interface IAlertThresholds {
  /**
   * Whether to notify when readings that worked fail, and when they are
   * back.
   */
  readFailureEnabled: boolean;
  /**
   * Whether to alert only about GPUs on which a kernel of this server holds
   * memory: on a shared server, another user's full GPU is no news.
   */
  onlyMyGpus: boolean;
  /**
   * Whether to alert on memory in use.
   */
  memoryEnabled: boolean;
  /**
   * Alert when memory in use goes above this share of the total, in percent.
   */
  memoryPercent: number;
  /**
   * Whether a memory alert needs the memory to be growing toward the total
   * (the out-of-memory error that is coming), not a caching allocator that
   * holds 90 % of the card as it normally does.
   */
  memoryOnlyWhenGrowing: boolean;
  /**
   * Whether to alert on temperature.
   */
  temperatureEnabled: boolean;
  /**
   * Alert when the core goes above this temperature, in °C.
   */
  temperatureCelsius: number;
  /**
   * Whether to alert when a GPU slows its clocks down.
   */
  slowdownEnabled: boolean;
  /**
   * Whether to alert on low utilisation while memory is held.
   */
  lowUtilizationEnabled: boolean;
  /**
   * Utilisation below this, in percent, counts as low.
   */
  lowUtilizationPercent: number;
  /**
   * Alert when utilisation has been low this long, in minutes.
   */
  lowUtilizationMinutes: number;
}

/**
 * The thresholds of the settings' defaults.
 */
export const DEFAULT_ALERT_THRESHOLDS: IAlertThresholds =
  SETTINGS_DEFAULTS.alerts;

/**
 * How far back a memory alert looks for growth, in seconds.
 */
export const GROWTH_WINDOW_SECONDS = 60;

/**
 * The growth, as a share of the card, that makes memory "growing": a
 * kernel allocating toward the total, not one holding its cache steady.
 */
export const GROWTH_SHARE = 0.02;

/**
 * A memory alert re-arms once memory in use is this many percentage points
 * below its threshold, and a temperature alert once the core is this many
 * degrees below: readings wobble, and a GPU hovering at the threshold must
 * not notify on every wobble.
 */
export const REARM_MARGIN = 5;

/**
 * How long a GPU must have slowed down before it is news, in seconds: a
 * power brake of a moment is not.
 */
export const SLOWDOWN_SECONDS = 10;

/**
 * Readings further apart than this, in seconds, do not make one episode of
 * a condition that must last (a slowdown, low utilisation): what happened
 * between them is unknown.
 */
export const MAX_OBSERVATION_GAP_SECONDS = 120;

/**
 * Where one kind of alert of one GPU stands.
 */
export interface IAlertEpisode {
  /**
   * Whether an episode was reported and has not ended.
   */
  firing: boolean;
  /**
   * When the condition started to hold (a condition that must last only).
   */
  since: number | null;
  /**
   * When the condition was last seen holding (a condition that must last
   * only).
   */
  seen: number | null;
  /**
   * The memory that grows toward the total, in MiB, at each reading of
   * the last {@link GROWTH_WINDOW_SECONDS} (memory only).
   */
  recent?: { timestamp: number; mib: number }[];
}

/**
 * One kind of GPU alert: the setting that switches it on, and how a GPU's
 * readings start and end its episodes. How its notification reads is in
 * `alertMessages.ts`, which loads with the first alert.
 */
export interface IAlertCheck {
  /**
   * The setting that switches it on and off.
   */
  enabledBy: keyof IAlertThresholds;
  /**
   * Advance an episode with a GPU's reading; the reading the alert reports
   * when an episode starts (the `value` of {@link IGpuAlert}), null
   * otherwise.
   */
  step(
    episode: IAlertEpisode,
    gpu: IGpu,
    timestamp: number,
    thresholds: IAlertThresholds
  ): number | null;
  /**
   * What its alert tells beyond the reading.
   */
  details?(gpu: IGpu): Pick<IGpuAlert, 'reason' | 'holder'>;
  /**
   * Whether a GPU's condition is news to every user of the server, even with
   * {@link IAlertThresholds.onlyMyGpus} on and no kernel of ours on it.
   */
  newsToAll?(gpu: IGpu): boolean;
  /**
   * Start the episode of a GPU that a kernel of this server took, since the
   * last reading, at `timestamp`.
   */
  takenAt?(episode: IAlertEpisode, timestamp: number): void;
}

/**
 * Every kind of GPU alert, in the order they are checked and reported.
 */
export const ALERTS = {
  /**
   * The GPU no longer answers the driver (fell off the bus, Xid 79): it
   * needs a reset or a reboot. Reports NaN.
   */
  lost: {
    // A lost GPU is one that can no longer be read.
    enabledBy: 'readFailureEnabled',
    // Its processes, ours among them, are gone with it.
    newsToAll: gpu => Private.isLost(gpu),
    step: (episode, gpu) => {
      const lost = Private.isLost(gpu);
      const starts = lost && !episode.firing;
      episode.firing = lost;
      return starts ? NaN : null;
    }
  },
  /**
   * Memory in use above a share of the total. Reports the percent in use.
   */
  memory: {
    enabledBy: 'memoryEnabled',
    // A kernel of ours that took the GPU since the last reading grew from
    // nothing; one that held it when the page opened did not (the page
    // tells nothing it told before it was reloaded).
    takenAt: (episode, timestamp) => {
      episode.recent = [{ timestamp, mib: 0 }];
    },
    step: (episode, gpu, timestamp, thresholds) => {
      const grew = Private.growing(episode, gpu, timestamp);
      return Private.crossing(
        episode,
        thresholds.memoryOnlyWhenGrowing && !episode.firing && !grew
          ? null
          : Private.memoryPercent(gpu),
        thresholds.memoryPercent
      );
    }
  },
  /**
   * The core above a temperature. Reports it, in °C.
   */
  temperature: {
    enabledBy: 'temperatureEnabled',
    step: (episode, gpu, timestamp, thresholds) =>
      Private.crossing(
        episode,
        gpu.temperature_c,
        thresholds.temperatureCelsius
      )
  },
  /**
   * The clocks held down for heat, a power brake or a hardware signal, for
   * {@link SLOWDOWN_SECONDS}. Reports the temperature (NaN if unknown).
   */
  slowdown: {
    enabledBy: 'slowdownEnabled',
    step: (episode, gpu, timestamp) =>
      Private.lasted(
        episode,
        Private.slowing(gpu).length > 0,
        timestamp,
        SLOWDOWN_SECONDS
      )
        ? (gpu.temperature_c ?? NaN)
        : null,
    details: gpu => ({ reason: Private.slowing(gpu)[0] })
  },
  /**
   * Utilisation low for minutes while memory is held (a GPU waiting on data,
   * or a kernel that holds a GPU it no longer uses). Reports the
   * utilisation, in percent.
   */
  lowUtilization: {
    enabledBy: 'lowUtilizationEnabled',
    step: (episode, gpu, timestamp, thresholds) => {
      const utilization = gpu.utilization_gpu;
      const holds =
        utilization !== null &&
        utilization < thresholds.lowUtilizationPercent &&
        gpu.memory_used_mib !== null &&
        gpu.memory_used_mib >= HELD_MEMORY_MIB;
      return Private.lasted(
        episode,
        holds,
        timestamp,
        thresholds.lowUtilizationMinutes * 60
      )
        ? utilization
        : null;
    },
    details: gpu => ({ holder: Private.holder(gpu) })
  }
} satisfies Record<string, IAlertCheck>;

/**
 * What an alert is about: a key of {@link ALERTS}.
 */
export type GpuAlertKind = keyof typeof ALERTS;

/**
 * The alerts in the order they are checked and reported.
 */
export const ALERT_KINDS = Object.keys(ALERTS) as readonly GpuAlertKind[];

/**
 * An alert that has just started.
 */
export interface IGpuAlert {
  /**
   * What it is about.
   */
  kind: GpuAlertKind;
  /**
   * The GPU's index.
   */
  gpuIndex: number;
  /**
   * The GPU's UUID, or "#" and its index when it has none: what its
   * episodes are kept under.
   */
  gpuKey: string;
  /**
   * The GPU's product name.
   */
  gpuName: string | null;
  /**
   * The GPU's PCI bus id, which the driver's messages name it by.
   */
  gpuBusId: string | null;
  /**
   * The reading that crossed the threshold, as its kind in {@link ALERTS}
   * says.
   */
  value: number;
  /**
   * Why a GPU slowed down (slowdown alerts only), the most serious reason.
   */
  reason?: ClockThrottleReason;
  /**
   * The memory the GPU holds, in MiB.
   */
  memoryUsedMiB: number | null;
  /**
   * Who holds the memory of a GPU idle for minutes (low utilisation alerts
   * only): the process with the most memory on it.
   */
  holder?: IAlertHolder;
}

/**
 * Who holds an idle GPU's memory, so that the alert names the notebook and
 * offers what frees it.
 */
export interface IAlertHolder {
  /**
   * The kernel of this server whose process it is; null for another user's
   * process, or one this server cannot see.
   */
  kernelId: string | null;
  /**
   * The notebook (or console) the kernel serves; null without a session.
   */
  path: string | null;
  /**
   * Whether it is the user's own kernel: what the alert's actions may free.
   */
  own: boolean;
}

/**
 * The alert state machine: per GPU and kind of alert, an episode starts when
 * its condition holds (for low utilisation: for the set minutes), is reported
 * once, and ends when the condition clears, which re-arms the alert.
 */
export class GpuAlerts {
  /**
   * Start with no episode under way.
   */
  constructor(thresholds: IAlertThresholds = DEFAULT_ALERT_THRESHOLDS) {
    this._thresholds = thresholds;
  }

  /**
   * The thresholds in force. A kind of alert that is switched off forgets its
   * episodes: switched on again, it reports a condition that still holds.
   */
  get thresholds(): IAlertThresholds {
    return this._thresholds;
  }
  set thresholds(thresholds: IAlertThresholds) {
    this._thresholds = thresholds;
    for (const state of this._states.values()) {
      for (const kind of ALERT_KINDS) {
        if (!Private.isEnabled(thresholds, kind)) {
          state[kind] = { ...Private.IDLE };
        }
      }
    }
  }

  /**
   * Whether any kind of notification is switched on.
   */
  get enabled(): boolean {
    return (
      this._thresholds.readFailureEnabled ||
      ALERT_KINDS.some(kind => Private.isEnabled(this._thresholds, kind))
    );
  }

  /**
   * The episodes reported and not ended, each as "<GPU uuid>:<kind>": what
   * a page keeps so that its next load does not report them again.
   */
  get firing(): string[] {
    const keys: string[] = [];
    for (const [key, state] of this._states) {
      for (const kind of ALERT_KINDS) {
        if (state[kind].firing) {
          keys.push(`${key}:${kind}`);
        }
      }
    }
    return keys.sort();
  }

  /**
   * Whether the episode an alert started is still under way.
   */
  isFiring(alert: IGpuAlert): boolean {
    return this._states.get(alert.gpuKey)?.[alert.kind].firing ?? false;
  }

  /**
   * Take the episodes an earlier load of the page reported (see
   * {@link firing}) as reported: a condition that still holds is no news.
   */
  restore(firing: readonly string[]): void {
    for (const entry of firing) {
      const at = entry.lastIndexOf(':');
      const [key, kind] = [entry.slice(0, at), entry.slice(at + 1)];
      if (!(ALERT_KINDS as readonly string[]).includes(kind)) {
        continue;
      }
      let state = this._states.get(key);
      if (!state) {
        state = Private.idleState();
        this._states.set(key, state);
      }
      state[kind as GpuAlertKind].firing = true;
    }
  }

  /**
   * Check a snapshot; the alerts whose episode starts with it.
   *
   * A snapshot that failed, or that is not newer than the last one checked,
   * changes nothing.
   */
  update(snapshot: IGpuSnapshot): IGpuAlert[] {
    if (snapshot.error !== null || snapshot.timestamp <= this._lastTimestamp) {
      return [];
    }
    this._lastTimestamp = snapshot.timestamp;
    const started: IGpuAlert[] = [];
    for (const gpu of snapshot.gpus) {
      const key = gpu.uuid ?? `#${gpu.index}`;
      if (
        this._thresholds.onlyMyGpus &&
        !Private.heldByOurKernels(gpu) &&
        !Private.newsToAll(gpu)
      ) {
        // No longer ours (our kernel exited): its episodes end with it, so
        // that the GPU alerts again when a kernel of ours comes back.
        this._states.delete(key);
        this._notOurs.set(key, snapshot.timestamp);
        continue;
      }
      let state = this._states.get(key);
      if (!state) {
        state = Private.idleState();
        const notOurs = this._notOurs.get(key);
        if (notOurs !== undefined) {
          for (const kind of ALERT_KINDS) {
            const check: IAlertCheck = ALERTS[kind];
            check.takenAt?.(state[kind], notOurs);
          }
        }
        this._states.set(key, state);
      }
      this._notOurs.delete(key);
      for (const kind of ALERT_KINDS) {
        const check: IAlertCheck = ALERTS[kind];
        if (!Private.isEnabled(this._thresholds, kind)) {
          continue;
        }
        const value = check.step(
          state[kind],
          gpu,
          snapshot.timestamp,
          this._thresholds
        );
        if (value !== null) {
          started.push({
            kind,
            gpuIndex: gpu.index,
            gpuKey: key,
            gpuName: gpu.name,
            gpuBusId: gpu.pci_bus_id,
            value,
            memoryUsedMiB: gpu.memory_used_mib,
            ...check.details?.(gpu)
          });
        }
      }
    }
    return started;
  }

  private _thresholds: IAlertThresholds;
  private _lastTimestamp = -Infinity;
  private _states = new Map<string, Private.GpuState>();
  private _notOurs = new Map<string, number>();
}

/**
 * A change of whether the GPUs can be read, worth one notification: `lost`
 * when readings that worked fail, `back` when they work again.
 */
export type SourceChange = 'lost' | 'back';

/**
 * Follows whether the GPUs can be read, to notify once when readings that
 * worked in this session fail, and once when they come back. A machine
 * that never had readings (no driver, a failure already there when the page
 * loaded) notifies nothing: the panel and the status bar say it.
 */
export class SourceHealth {
  /**
   * Take a read's outcome: the latest snapshot, and the failure of the
   * latest request if it failed; the change it makes, if any.
   */
  update(
    snapshot: IGpuSnapshot | null,
    failure: IRequestFailure | null
  ): SourceChange | null {
    const readable =
      failure === null && snapshot !== null && snapshot.error === null;
    // A network blip or a timeout (a laptop waking up, the server
    // restarting) is no news about the GPUs: only the server's own answer is.
    const unreadable =
      failure?.kind === 'server' ||
      (failure === null && snapshot !== null && snapshot.error !== null);
    if (readable) {
      const back = this._lost;
      this._worked = true;
      this._lost = false;
      return back ? 'back' : null;
    }
    if (unreadable && this._worked && !this._lost) {
      this._lost = true;
      return 'lost';
    }
    return null;
  }

  private _worked = false;
  private _lost = false;
}

/**
 * File-local state and steps of the state machine.
 */
namespace Private {
  /**
   * The episodes of one GPU.
   */
  export type GpuState = { [K in GpuAlertKind]: IAlertEpisode };

  /**
   * No episode under way.
   */
  export const IDLE: IAlertEpisode = { firing: false, since: null, seen: null };

  /**
   * A GPU with no episode under way.
   */
  export function idleState(): GpuState {
    const state = {} as GpuState;
    for (const kind of ALERT_KINDS) {
      state[kind] = { ...IDLE };
    }
    return state;
  }

  /**
   * Whether a kind of alert is switched on.
   */
  export function isEnabled(
    thresholds: IAlertThresholds,
    kind: GpuAlertKind
  ): boolean {
    return thresholds[ALERTS[kind].enabledBy] === true;
  }

  /**
   * Whether a GPU's condition is news to every user of the server for some
   * kind of alert.
   */
  export function newsToAll(gpu: IGpu): boolean {
    return ALERT_KINDS.some(kind => {
      const check: IAlertCheck = ALERTS[kind];
      return check.newsToAll?.(gpu) ?? false;
    });
  }

  /**
   * Whether the server reads the GPU as lost, whatever the source said it
   * with (nvidia-smi's "GPU is lost", NVML's GPU_IS_LOST).
   */
  export function isLost(gpu: IGpu): boolean {
    return gpu.error?.kind === 'gpu_lost';
  }

  /**
   * Whether a kernel of this server holds memory on a GPU (the server joins
   * each process to its kernel).
   */
  export function heldByOurKernels(gpu: IGpu): boolean {
    return gpu.processes.some(process => process.kernel_id !== null);
  }

  /**
   * The reasons the GPU gives now for slowing down, the most serious first.
   */
  export function slowing(gpu: IGpu): ClockThrottleReason[] {
    const reasons = gpu.clock_throttle_reasons ?? [];
    return SLOWING_REASONS.filter(reason => reasons.includes(reason));
  }

  /**
   * Advance an episode of a condition that must last `seconds` before it is
   * reported; whether the episode starts now. It ends with the first reading
   * without the condition.
   */
  export function lasted(
    episode: IAlertEpisode,
    holds: boolean,
    timestamp: number,
    seconds: number
  ): boolean {
    if (!holds) {
      Object.assign(episode, IDLE);
      return false;
    }
    // Two spells with readings missed between them (a tab asleep) are not
    // one that lasted.
    if (
      !episode.firing &&
      (episode.seen === null ||
        timestamp - episode.seen > MAX_OBSERVATION_GAP_SECONDS)
    ) {
      episode.since = timestamp;
    }
    episode.seen = timestamp;
    if (!episode.firing && timestamp - episode.since! >= seconds) {
      episode.firing = true;
      return true;
    }
    return false;
  }

  /**
   * Whether the memory that fills a GPU grew by at least
   * {@link GROWTH_SHARE} of the card over the last
   * {@link GROWTH_WINDOW_SECONDS}: that of this server's kernels where they
   * hold some, else all of it. Keeps the readings it needs in the episode.
   */
  export function growing(
    episode: IAlertEpisode,
    gpu: IGpu,
    timestamp: number
  ): boolean {
    const ours = gpu.processes.filter(process => process.kernel_id !== null);
    const mib =
      ours.length > 0
        ? ours.reduce((sum, process) => sum + (process.used_memory_mib ?? 0), 0)
        : gpu.memory_used_mib;
    if (mib === null || !gpu.memory_total_mib) {
      return false;
    }
    const recent = (episode.recent ?? []).filter(
      reading => reading.timestamp >= timestamp - GROWTH_WINDOW_SECONDS
    );
    recent.push({ timestamp, mib });
    episode.recent = recent;
    const least = Math.min(...recent.map(reading => reading.mib));
    return mib - least >= GROWTH_SHARE * gpu.memory_total_mib;
  }

  /**
   * An episode of a reading above a threshold, which ends
   * {@link REARM_MARGIN} below it. An unknown reading changes nothing.
   */
  export function crossing(
    episode: IAlertEpisode,
    value: number | null,
    threshold: number
  ): number | null {
    if (value === null) {
      return null;
    }
    if (!episode.firing && value > threshold) {
      episode.firing = true;
      return value;
    }
    if (episode.firing && value <= threshold - REARM_MARGIN) {
      episode.firing = false;
    }
    return null;
  }

  /**
   * Who holds the most memory on a GPU.
   */
  export function holder(gpu: IGpu): IAlertHolder {
    const [first] = [...gpu.processes].sort(
      (a, b) => (b.used_memory_mib ?? -1) - (a.used_memory_mib ?? -1)
    );
    return first?.kernel_id
      ? {
          kernelId: first.kernel_id,
          path: first.session_path,
          own: first.own ?? false
        }
      : { kernelId: null, path: null, own: false };
  }

  /**
   * The share of a GPU's memory in use, in percent; null when unknown.
   */
  export function memoryPercent(gpu: IGpu): number | null {
    return gpu.memory_used_mib === null || !gpu.memory_total_mib
      ? null
      : (gpu.memory_used_mib / gpu.memory_total_mib) * 100;
  }
}
