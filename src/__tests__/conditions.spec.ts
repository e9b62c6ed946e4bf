import { gpuConditions } from '../gpu/conditions';
import { ClockThrottleReason } from '../restapi/gpus';
import { a5000Snapshot } from './payloads';
import { trans } from './trans';

/**
 * GPU 0 of the two-A5000 capture with the driver giving `reasons`.
 */
function heldBy(...reasons: ClockThrottleReason[]) {
  return { ...a5000Snapshot().gpus[0], clock_throttle_reasons: reasons };
}

describe('gpuConditions', () => {
  it('says nothing of idle clocks or clocks set lower on purpose', () => {
    const gpu = heldBy(
      'gpu_idle',
      'applications_clocks_setting',
      'display_clocks_setting'
    );
    expect(gpuConditions(gpu, trans)).toEqual([]);
  });

  it('says nothing where the driver does not report the reasons', () => {
    const gpu = { ...a5000Snapshot().gpus[0], clock_throttle_reasons: null };
    expect(gpuConditions(gpu, trans)).toEqual([]);
  });

  it('names each reason in plain words, the most serious first', () => {
    const gpu = {
      ...heldBy(
        'sync_boost',
        'sw_power_cap',
        'hw_slowdown',
        'hw_power_brake_slowdown',
        'sw_thermal_slowdown'
      ),
      temperature_c: 88
    };
    expect(
      gpuConditions(gpu, trans).map(({ severity, text }) => [severity, text])
    ).toEqual([
      ['warning', 'Thermal slowdown: 88 °C'],
      ['warning', 'Power brake slowdown'],
      ['warning', 'Hardware slowdown'],
      ['info', 'At its power limit: 230 W'],
      ['info', 'Held to its group (sync boost)']
    ]);
  });

  it('counts one uncorrectable memory error in the singular', () => {
    const gpu = { ...a5000Snapshot().gpus[1], ecc_errors_uncorrected: 1 };
    const [condition] = gpuConditions(gpu, trans);
    expect(condition.text).toBe('1 uncorrectable memory error');
    expect(condition.hint).toContain('sudo nvidia-smi -r -i 1');
  });
});
