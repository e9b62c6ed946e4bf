/**
 * @jest-environment node
 */

import { alertMessage, alertNotices } from '../alerts/alertMessages';
import {
  DEFAULT_ALERT_THRESHOLDS,
  GpuAlerts,
  GROWTH_SHARE,
  IGpuAlert,
  MAX_OBSERVATION_GAP_SECONDS,
  REARM_MARGIN,
  SourceHealth
} from '../alerts/alerts';
import { HELD_MEMORY_MIB } from '../restapi/rules';
import { MAX_MESSAGE_LENGTH } from '../notification';
import {
  a100MigSnapshot,
  a5000At,
  a5000KernelSnapshot,
  a5000Kernels,
  driverNotLoadedSnapshot,
  gb200LostSnapshot,
  noGpuSnapshot
} from './payloads';
import { trans } from './trans';

/**
 * The defaults, about every GPU (the capture's processes are no kernel of
 * this server: they are llama-server's), memory alerts on the threshold
 * alone.
 */
const EVERY_GPU = {
  ...DEFAULT_ALERT_THRESHOLDS,
  onlyMyGpus: false,
  memoryOnlyWhenGrowing: false
};

/**
 * GPU 0's memory in use for a share of its 24564 MiB, in MiB.
 */
function mibAt(percent: number): number {
  return Math.round((24564 * percent) / 100);
}

describe('GpuAlerts', () => {
  it('by default says nothing of a caching allocator that holds 91 % for minutes, and alerts once memory grows toward the total', () => {
    const alerts = new GpuAlerts({
      ...DEFAULT_ALERT_THRESHOLDS,
      onlyMyGpus: false
    });
    const memoryAlerts = (timestamp: number, percent?: number): number[] =>
      alerts
        .update(
          a5000At(
            timestamp,
            percent === undefined
              ? {}
              : { 0: { memory_used_mib: mibAt(percent) } }
          )
        )
        .filter(alert => alert.kind === 'memory')
        .map(alert => alert.gpuIndex);

    // The capture: GPU 0 at 91.3 %, steady.
    for (let seconds = 0; seconds <= 600; seconds += 30) {
      expect(memoryAlerts(1000 + seconds)).toEqual([]);
    }
    // A kernel allocating: 91 → 92 % in 10 s is under 2 % of the card...
    expect(memoryAlerts(2000, 91)).toEqual([]);
    expect(memoryAlerts(2010, 92)).toEqual([]);
    // ...then it keeps growing: 2 % within a minute, above the threshold.
    expect(memoryAlerts(2020, 93.5)).toEqual([0]);
    expect(memoryAlerts(2030, 96)).toEqual([]);
  });

  it("judges the growth by this server's kernels' own memory where they hold some, not by another user's", () => {
    const alerts = new GpuAlerts({
      ...DEFAULT_ALERT_THRESHOLDS,
      onlyMyGpus: false
    });
    const [llama] = a5000At(0).gpus[0].processes;
    const kernelMiB = 10240;
    // GPU 0 with the kernel's memory and another user's process beside it.
    const memoryAlerts = (timestamp: number, ours: number, total: number) =>
      alerts
        .update(
          a5000At(timestamp, {
            0: {
              memory_used_mib: total,
              processes: [
                { ...llama, pid: 1, kernel_id: 'k-1', used_memory_mib: ours },
                {
                  ...llama,
                  pid: 2,
                  kernel_id: null,
                  used_memory_mib: total - ours
                }
              ]
            }
          })
        )
        .filter(alert => alert.kind === 'memory')
        .map(alert => alert.gpuIndex);

    // 92 % to 97 %: the other process grows, the kernel's 10 GiB stay.
    expect(memoryAlerts(1000, kernelMiB, mibAt(92))).toEqual([]);
    expect(memoryAlerts(1020, kernelMiB, mibAt(97))).toEqual([]);
    // The kernel grows by 2.5 % of the card within the minute: that is news.
    expect(memoryAlerts(1040, kernelMiB + mibAt(2.5), mibAt(97))).toEqual([0]);
  });

  it('raises one memory alert for GPU 0 of the capture (91.3 % in use), not for GPU 1', () => {
    const alerts = new GpuAlerts(EVERY_GPU);

    const started = alerts.update(a5000At(1000));

    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({
      kind: 'memory',
      gpuIndex: 0,
      gpuName: 'NVIDIA RTX A5000'
    });
    expect(started[0].value).toBeCloseTo(91.34, 1);
  });

  it('alerts once per episode, re-arms when memory clears the threshold by the margin', () => {
    const alerts = new GpuAlerts(EVERY_GPU);
    const kinds = (timestamp: number, percent: number): string[] =>
      alerts
        .update(a5000At(timestamp, { 0: { memory_used_mib: mibAt(percent) } }))
        .map(alert => `${alert.kind}:${alert.gpuIndex}`);

    expect(kinds(1, 95)).toEqual(['memory:0']);
    expect(kinds(2, 96)).toEqual([]);
    // Wobbling just under the threshold does not end the episode.
    expect(kinds(3, 88)).toEqual([]);
    expect(kinds(4, 91)).toEqual([]);
    // Clearly under it does; the next crossing is a new episode.
    expect(kinds(5, 80)).toEqual([]);
    expect(kinds(6, 92)).toEqual(['memory:0']);
  });

  it('alerts on temperature above the threshold, per GPU', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false
    });

    expect(alerts.update(a5000At(1, { 1: { temperature_c: 84 } }))).toEqual([
      expect.objectContaining({ kind: 'temperature', gpuIndex: 1, value: 84 })
    ]);
    expect(
      alerts.update(
        a5000At(2, { 0: { temperature_c: 81 }, 1: { temperature_c: 85 } })
      )
    ).toEqual([expect.objectContaining({ kind: 'temperature', gpuIndex: 0 })]);
  });

  it('alerts when a GPU has slowed down for 10 s, naming why, and not for a power cap or a brake of a moment', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false,
      temperatureEnabled: false
    });
    const hot = {
      temperature_c: 91,
      clock_throttle_reasons: [
        'sw_power_cap' as const,
        'hw_thermal_slowdown' as const
      ]
    };
    const brake = {
      clock_throttle_reasons: ['hw_power_brake_slowdown' as const]
    };
    // GPU 1 is held at its power limit all along (the capture's state):
    // normal under load, no alert.
    const capped = { 1: { clock_throttle_reasons: ['sw_power_cap' as const] } };
    expect(alerts.update(a5000At(100, { ...capped, 0: brake }))).toEqual([]);
    expect(alerts.update(a5000At(105, { ...capped }))).toEqual([]);
    expect(alerts.update(a5000At(110, { ...capped, 0: hot }))).toEqual([]);
    expect(alerts.update(a5000At(115, { ...capped, 0: hot }))).toEqual([]);
    const [alert] = alerts.update(a5000At(120, { ...capped, 0: hot }));
    expect(alert).toEqual(
      expect.objectContaining({
        kind: 'slowdown',
        gpuIndex: 0,
        value: 91,
        reason: 'hw_thermal_slowdown'
      })
    );
    expect(alertMessage([alert], EVERY_GPU, trans)).toBe(
      'GPU 0 (NVIDIA RTX A5000) slows down: thermal slowdown at 91 °C. Its clocks are held down until it is fixed.'
    );
    // Once per episode; a reading without the slowdown ends it.
    expect(alerts.update(a5000At(125, { 0: hot }))).toEqual([]);
    alerts.update(a5000At(130));
    // A slowdown seen again after minutes without readings (a tab asleep)
    // starts anew: it has not lasted those minutes.
    alerts.update(a5000At(150));
    expect(alerts.update(a5000At(151, { 0: brake }))).toEqual([]);
    expect(alerts.update(a5000At(400, { 0: brake }))).toEqual([]);
    const [again] = alerts.update(a5000At(410, { 0: brake }));
    expect(alertMessage([again], EVERY_GPU, trans)).toBe(
      'GPU 0 (NVIDIA RTX A5000) slows down: power brake slowdown. Its clocks are held down until it is fixed.'
    );
  });

  it('alerts on low utilisation only after the set minutes while memory is held', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false
    });
    // Both A5000s of the capture: 0 % busy, holding 91 % and 70 %.
    const lowAt = (timestamp: number): number[] =>
      alerts.update(a5000At(timestamp)).map(alert => alert.gpuIndex);

    for (let seconds = 0; seconds < 300; seconds += 30) {
      expect(lowAt(1000 + seconds)).toEqual([]);
    }
    expect(lowAt(1000 + 300)).toEqual([0, 1]);
    expect(lowAt(1000 + 330)).toEqual([]);
  });

  it('restarts the low-utilisation clock when the GPU gets busy or frees its memory', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false
    });
    const busy = { utilization_gpu: 95 };
    const freed = { memory_used_mib: 300 };

    alerts.update(a5000At(0));
    alerts.update(a5000At(60));
    alerts.update(a5000At(120, { 0: busy, 1: freed }));
    for (let seconds = 180; seconds < 480; seconds += 60) {
      expect(alerts.update(a5000At(seconds))).toEqual([]);
    }
    expect(alerts.update(a5000At(480)).map(alert => alert.gpuIndex)).toEqual([
      0, 1
    ]);
  });

  it('does not count time nobody watched towards low utilisation', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false
    });

    alerts.update(a5000At(0));
    // The tab was in the background for an hour.
    expect(alerts.update(a5000At(3600))).toEqual([]);
    for (let seconds = 3660; seconds < 3900; seconds += 60) {
      expect(alerts.update(a5000At(seconds))).toEqual([]);
    }
    expect(alerts.update(a5000At(3900))).toHaveLength(2);
  });

  it('takes each figure of its rules at its word', () => {
    // A reading at the threshold is not above it; an episode ends exactly
    // the margin under it.
    const celsius = DEFAULT_ALERT_THRESHOLDS.temperatureCelsius;
    const hot = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false,
      lowUtilizationEnabled: false
    });
    const hotAt = (timestamp: number, temperature: number): string[] =>
      hot
        .update(a5000At(timestamp, { 0: { temperature_c: temperature } }))
        .map(alert => alert.kind);
    expect(hotAt(1, celsius)).toEqual([]);
    expect(hotAt(2, celsius + 1)).toEqual(['temperature']);
    expect(hotAt(3, celsius - REARM_MARGIN)).toEqual([]);
    expect(hotAt(4, celsius + 1)).toEqual(['temperature']);

    // Utilisation at the threshold is not low; the rule's MiB is held.
    const percent = DEFAULT_ALERT_THRESHOLDS.lowUtilizationPercent;
    const low = new GpuAlerts({ ...EVERY_GPU, memoryEnabled: false });
    const lowAt = (timestamp: number, utilization: number): string[] =>
      low
        .update(
          a5000At(timestamp, {
            0: {
              utilization_gpu: utilization,
              memory_used_mib: HELD_MEMORY_MIB
            },
            1: { memory_used_mib: 0 }
          })
        )
        .map(alert => alert.kind);
    for (let seconds = 0; seconds <= 360; seconds += 60) {
      expect(lowAt(seconds, percent)).toEqual([]);
    }
    for (let seconds = 400; seconds < 700; seconds += 60) {
      expect(lowAt(seconds, percent - 1)).toEqual([]);
    }
    expect(lowAt(700, percent - 1)).toEqual(['lowUtilization']);

    // Readings exactly the longest gap apart are one episode.
    const watched = new GpuAlerts({ ...EVERY_GPU, memoryEnabled: false });
    for (
      let seconds = 0;
      seconds < 300;
      seconds += MAX_OBSERVATION_GAP_SECONDS
    ) {
      expect(watched.update(a5000At(seconds))).toEqual([]);
    }
    expect(watched.update(a5000At(360))).toHaveLength(2);

    // Memory that grew exactly the growth share is growing.
    const growing = new GpuAlerts({
      ...DEFAULT_ALERT_THRESHOLDS,
      onlyMyGpus: false
    });
    const memoryAt = (timestamp: number, mib: number): number =>
      growing
        .update(
          a5000At(timestamp, {
            0: { memory_total_mib: 25600, memory_used_mib: mib }
          })
        )
        .filter(alert => alert.kind === 'memory').length;
    expect(memoryAt(1, 23000)).toBe(0);
    expect(memoryAt(2, 23000 + GROWTH_SHARE * 25600)).toBe(1);
  });

  it('ignores failed reads, repeated snapshots and GPUs without the reading', () => {
    const alerts = new GpuAlerts(EVERY_GPU);

    expect(alerts.update(driverNotLoadedSnapshot())).toEqual([]);
    expect(alerts.update(a5000At(5))).toHaveLength(1);
    // The same snapshot again (a poll faster than the sampler).
    expect(
      alerts.update(a5000At(5, { 1: { memory_used_mib: 24000 } }))
    ).toEqual([]);
    // MIG: no utilisation, so no low-utilisation alert, and 50 MiB in use.
    const mig = new GpuAlerts({
      ...EVERY_GPU,
      lowUtilizationMinutes: 0
    });
    expect(mig.update(a100MigSnapshot())).toEqual([]);
  });

  it('forgets the episodes of an alert switched off, and raises it again when switched on', () => {
    const alerts = new GpuAlerts(EVERY_GPU);
    expect(alerts.enabled).toBe(true);
    expect(alerts.update(a5000At(1))).toHaveLength(1);

    alerts.thresholds = { ...EVERY_GPU, memoryEnabled: false };
    expect(alerts.update(a5000At(2))).toEqual([]);

    alerts.thresholds = EVERY_GPU;
    expect(alerts.update(a5000At(3))).toHaveLength(1);

    const gpuAlertsOff = {
      ...EVERY_GPU,
      memoryEnabled: false,
      temperatureEnabled: false,
      slowdownEnabled: false,
      lowUtilizationEnabled: false
    };
    alerts.thresholds = gpuAlertsOff;
    // The notification that the GPUs can no longer be read is still on.
    expect(alerts.enabled).toBe(true);
    alerts.thresholds = { ...gpuAlertsOff, readFailureEnabled: false };
    expect(alerts.enabled).toBe(false);
  });

  it('alerts at once when a lowered threshold is already crossed', () => {
    const alerts = new GpuAlerts(EVERY_GPU);
    alerts.update(a5000At(1));

    alerts.thresholds = { ...EVERY_GPU, memoryPercent: 60 };

    expect(alerts.update(a5000At(2)).map(alert => alert.gpuIndex)).toEqual([1]);
  });
});

describe('alertMessage', () => {
  const alert = (changes: Partial<IGpuAlert>): IGpuAlert => ({
    kind: 'memory',
    gpuIndex: 0,
    gpuKey: 'GPU-0',
    gpuName: 'NVIDIA RTX A5000',
    gpuBusId: '00000000:01:00.0',
    value: 91.34,
    memoryUsedMiB: 22437,
    ...changes
  });

  it('names the GPU, the reading and the threshold', () => {
    expect(alertMessage([alert({})], DEFAULT_ALERT_THRESHOLDS, trans)).toBe(
      'GPU 0 (NVIDIA RTX A5000): memory 91% full, above the 90% alert threshold.'
    );
    expect(
      alertMessage(
        [alert({ kind: 'temperature', value: 83.6 })],
        DEFAULT_ALERT_THRESHOLDS,
        trans
      )
    ).toBe('GPU 0 (NVIDIA RTX A5000): 84 °C, above the 80 °C alert threshold.');
    expect(
      alertMessage(
        [alert({ kind: 'lowUtilization', value: 0 })],
        DEFAULT_ALERT_THRESHOLDS,
        trans
      )
    ).toBe(
      "GPU 0 (NVIDIA RTX A5000): another user's process has held 21.9 GiB for 5 min under 30% busy."
    );
  });

  it('lists the GPUs of alerts that started together', () => {
    expect(
      alertMessage(
        [alert({}), alert({ gpuIndex: 1 }), alert({ gpuIndex: 3 })],
        DEFAULT_ALERT_THRESHOLDS,
        trans
      )
    ).toBe('GPUs 0, 1, 3: memory above the 90% alert threshold.');
  });

  it('stays within 140 characters, dropping a long name first', () => {
    const long = alert({
      kind: 'lowUtilization',
      gpuName: 'NVIDIA A100-SXM4-80GB '.repeat(4)
    });
    const message = alertMessage([long], DEFAULT_ALERT_THRESHOLDS, trans);
    expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    expect(message).toMatch(/^GPU 0: another user's process has held/);

    const many = Array.from({ length: 64 }, (_, gpuIndex) =>
      alert({ gpuIndex })
    );
    expect(
      alertMessage(many, DEFAULT_ALERT_THRESHOLDS, trans).length
    ).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
  });
});

describe('alerts about my GPUs only (the default)', () => {
  it("stay silent about another user's full GPU, and speak once my kernel takes memory on it", () => {
    const alerts = new GpuAlerts();

    // GPU 0 at 91.3 %, held by llama-server, no kernel of this server.
    expect(alerts.update(a5000At(1000))).toEqual([]);
    // The recorded snapshot in which that process is the kernel of
    // train.ipynb: now it is my GPU.
    const mine = a5000KernelSnapshot();
    mine.timestamp = 1001;
    expect(alerts.update(mine).map(alert => alert.kind)).toEqual(['memory']);

    // The kernel exits, its memory freed: the episode ends with it, and the
    // next kernel of ours that fills the GPU (from nothing: growing) is
    // alerted about again.
    expect(
      alerts.update(
        a5000At(1002, { 0: { processes: [], memory_used_mib: 100 } })
      )
    ).toEqual([]);
    const again = a5000KernelSnapshot();
    again.timestamp = 1003;
    expect(alerts.update(again).map(alert => alert.kind)).toEqual(['memory']);
  });
});

describe('a lost GPU', () => {
  it('is one error alert naming it by index and bus id with its reset, even on a GPU none of my kernels held, once per episode', () => {
    const alerts = new GpuAlerts();
    const lost = gb200LostSnapshot();
    lost.timestamp = 1000;
    const started = alerts.update(lost);
    expect(started.map(alert => [alert.kind, alert.gpuIndex])).toEqual([
      ['lost', 1]
    ]);
    expect(
      messagesOf(
        alertNotices(
          started,
          new Map(),
          () => true,
          DEFAULT_ALERT_THRESHOLDS,
          trans
        )
      )
    ).toEqual([
      {
        kind: 'lost',
        message:
          'GPU 1 (0000:0B:00.0) is lost. Check dmesg, then reset it once no process uses it (sudo nvidia-smi -r -i 1), or reboot.'
      }
    ]);

    // Still lost: no news. Back after a reset, then lost again: news again.
    const still = gb200LostSnapshot();
    still.timestamp = 1001;
    expect(alerts.update(still)).toEqual([]);
    const back = gb200LostSnapshot();
    back.timestamp = 1002;
    back.gpus[1].error = null;
    expect(alerts.update(back)).toEqual([]);
    const again = gb200LostSnapshot();
    again.timestamp = 1003;
    expect(alerts.update(again).map(alert => alert.kind)).toEqual(['lost']);
  });

  it('is not told again after a reload while it lasts, and not at all when read failures are muted', () => {
    const first = new GpuAlerts();
    const lost = gb200LostSnapshot();
    lost.timestamp = 1000;
    first.update(lost);
    const reloaded = new GpuAlerts();
    reloaded.restore(first.firing);
    expect(reloaded.update(lost)).toEqual([]);

    const muted = new GpuAlerts({
      ...DEFAULT_ALERT_THRESHOLDS,
      readFailureEnabled: false
    });
    expect(muted.update(lost)).toEqual([]);
  });
});

it('says nothing at page load of my kernel that already held the GPU, full', () => {
  const alerts = new GpuAlerts();
  const loaded = a5000KernelSnapshot();
  loaded.timestamp = 1000;

  expect(alerts.update(loaded)).toEqual([]);
  loaded.timestamp = 1030;
  expect(alerts.update(loaded)).toEqual([]);
});

describe('the episodes a page keeps between loads', () => {
  it('does not report again on the next load a condition that was already reported and still holds', () => {
    // A hot GPU 1 reported; the page is reloaded while it is still hot.
    const before = new GpuAlerts(EVERY_GPU);
    const hot = { 1: { temperature_c: 85 } };
    expect(before.update(a5000At(1, hot)).map(alert => alert.kind)).toEqual([
      'memory',
      'temperature'
    ]);
    const kept = before.firing;
    expect(kept).toEqual([
      `${a5000At(1).gpus[0].uuid}:memory`,
      `${a5000At(1).gpus[1].uuid}:temperature`
    ]);

    const after = new GpuAlerts(EVERY_GPU);
    after.restore(kept);
    expect(after.update(a5000At(100, hot))).toEqual([]);
    // Cooled down, then hot again: a new episode, reported.
    expect(after.update(a5000At(101, { 1: { temperature_c: 70 } }))).toEqual(
      []
    );
    expect(after.firing).toEqual([`${a5000At(1).gpus[0].uuid}:memory`]);
    expect(
      after.update(a5000At(102, hot)).map(alert => [alert.kind, alert.gpuIndex])
    ).toEqual([['temperature', 1]]);
  });

  it('reports a condition that the last load did not report, and ignores what it cannot read', () => {
    const alerts = new GpuAlerts(EVERY_GPU);
    alerts.restore(['not-an-episode', `${a5000At(1).gpus[1].uuid}:cooling`]);
    expect(
      alerts
        .update(a5000At(1, { 1: { temperature_c: 85 } }))
        .map(alert => [alert.kind, alert.gpuIndex])
    ).toEqual([
      ['memory', 0],
      ['temperature', 1]
    ]);
  });
});

describe('SourceHealth', () => {
  it('tells once that readings that worked are lost, and once that they are back', () => {
    const health = new SourceHealth();

    const serverDown = { kind: 'server' as const, message: '', status: 500 };
    expect(health.update(a5000At(1), null)).toBeNull();
    expect(health.update(driverNotLoadedSnapshot(), null)).toBe('lost');
    expect(health.update(driverNotLoadedSnapshot(), null)).toBeNull();
    expect(health.update(a5000At(2), serverDown)).toBeNull(); // still failing
    expect(health.update(a5000At(3), null)).toBe('back');
    expect(health.update(a5000At(4), null)).toBeNull();
  });

  it('takes a network blip or a timeout for no news about the GPUs', () => {
    const health = new SourceHealth();
    const blip = {
      kind: 'network' as const,
      message: 'Failed to fetch',
      status: null
    };

    expect(health.update(a5000At(1), null)).toBeNull();
    expect(health.update(a5000At(1), blip)).toBeNull();
    expect(health.update(a5000At(2), null)).toBeNull();
  });

  it('says nothing on a machine that never had readings, nor before the first', () => {
    const health = new SourceHealth();

    const serverDown = { kind: 'server' as const, message: '', status: 500 };
    expect(health.update(null, null)).toBeNull();
    expect(health.update(noGpuSnapshot(), null)).toBeNull();
    expect(health.update(null, serverDown)).toBeNull();
  });
});

describe('the alert of a GPU idle while memory is held', () => {
  /**
   * The recorded train.ipynb kernel on both A5000, both at 0 %, read at
   * 1000 and again five minutes later: the alerts of both.
   */
  function idleAlerts(): IGpuAlert[] {
    const alerts = new GpuAlerts({
      ...DEFAULT_ALERT_THRESHOLDS,
      memoryEnabled: false
    });
    const at = (timestamp: number) => {
      const snapshot = a5000KernelSnapshot();
      snapshot.timestamp = timestamp;
      return snapshot;
    };
    for (let timestamp = 1000; timestamp < 1300; timestamp += 60) {
      expect(alerts.update(at(timestamp))).toEqual([]);
    }
    const started = alerts.update(at(1300));
    expect(started.map(alert => [alert.kind, alert.gpuIndex])).toEqual([
      ['lowUtilization', 0],
      ['lowUtilization', 1]
    ]);
    return started;
  }

  it('names the notebook, what it holds and for how long, and says its kernel is idle between runs', () => {
    const [alert, other] = idleAlerts();
    expect(alert.holder).toEqual({
      kernelId: a5000Kernels()[0].kernel_id,
      path: 'train.ipynb',
      own: true
    });
    const idle = a5000Kernels().map(kernel => ({
      ...kernel,
      execution_state: 'idle'
    }));

    expect(alertMessage([alert], DEFAULT_ALERT_THRESHOLDS, trans, idle)).toBe(
      'GPU 0 (NVIDIA RTX A5000): train.ipynb has held 21.9 GiB for 5 min under 30% busy; its kernel is idle between runs.'
    );
    // Both GPUs at once, one notebook holding them: named, with all it holds.
    expect(
      alertMessage([alert, other], DEFAULT_ALERT_THRESHOLDS, trans, idle)
    ).toBe(
      'GPUs 0, 1: train.ipynb has held 38.8 GiB for 5 min under 30% busy; its kernel is idle between runs.'
    );
  });

  it('tells a kernel busy preparing data from one busy waiting on something else, by its CPU', () => {
    const [alert] = idleAlerts();
    const busy = (cpu: number) =>
      a5000Kernels().map(kernel => ({
        ...kernel,
        execution_state: 'busy',
        cpu_percent: cpu
      }));

    expect(
      alertMessage([alert], DEFAULT_ALERT_THRESHOLDS, trans, busy(180))
    ).toBe(
      'GPU 0 (NVIDIA RTX A5000): train.ipynb has held 21.9 GiB for 5 min under 30% busy while its kernel prepares data (CPU 180 %).'
    );
    expect(
      alertMessage([alert], DEFAULT_ALERT_THRESHOLDS, trans, busy(2))
    ).toBe(
      'GPU 0 (NVIDIA RTX A5000): train.ipynb has held 21.9 GiB for 5 min under 30% busy while its kernel waits on something else.'
    );
  });
});

describe('alertNotices', () => {
  it('gives one message per kind of alert that started, naming its GPUs', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      lowUtilizationEnabled: false
    });
    const started = alerts.update(
      a5000At(1, {
        0: { temperature_c: 85 },
        1: { temperature_c: 90, memory_used_mib: 24000 }
      })
    );

    expect(
      messagesOf(
        alertNotices(started, new Map(), () => true, alerts.thresholds, trans)
      )
    ).toEqual([
      {
        kind: 'memory',
        message: 'GPUs 0, 1: memory above the 90% alert threshold.'
      },
      {
        kind: 'temperature',
        message: 'GPUs 0, 1: above the 80 °C alert threshold.'
      }
    ]);
  });

  it('replaces the notice of a kind with one naming the GPUs still in an episode, not those whose episode ended', () => {
    const alerts = new GpuAlerts({
      ...EVERY_GPU,
      memoryEnabled: false,
      lowUtilizationEnabled: false
    });
    const [zeroHot] = alerts.update(a5000At(1, { 0: { temperature_c: 85 } }));
    const shown = new Map([['temperature' as const, [zeroHot]]]);

    // GPU 1 heats up while GPU 0 is still hot: one notice names both.
    const oneHot = alerts.update(
      a5000At(2, { 0: { temperature_c: 84 }, 1: { temperature_c: 88 } })
    );
    const [both] = alertNotices(
      oneHot,
      shown,
      alert => alerts.isFiring(alert),
      alerts.thresholds,
      trans
    );
    expect(both.message).toBe('GPUs 0, 1: above the 80 °C alert threshold.');

    // GPU 0 cooled down, then GPU 1 heats up again after cooling: only GPU 1.
    alerts.update(
      a5000At(3, { 0: { temperature_c: 40 }, 1: { temperature_c: 40 } })
    );
    const again = alerts.update(a5000At(4, { 1: { temperature_c: 88 } }));
    const [alone] = alertNotices(
      again,
      new Map([['temperature' as const, both.alerts]]),
      alert => alerts.isFiring(alert),
      alerts.thresholds,
      trans
    );
    expect(alone.message).toBe(
      'GPU 1 (NVIDIA RTX A5000): 88 °C, above the 80 °C alert threshold.'
    );
  });
});

function messagesOf(
  notices: { kind: string; message: string }[]
): { kind: string; message: string }[] {
  return notices.map(({ kind, message }) => ({ kind, message }));
}
