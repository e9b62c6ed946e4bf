import { TranslationBundle } from '@jupyterlab/translation';

import { ClockThrottleReason, IGpu } from '../restapi/gpus';
import { SLOWING_REASONS } from './slowingReasons';
import { formatCelsius, formatWatts } from '../format/units';

/**
 * Something about a GPU's state its numbers alone do not say: what holds
 * its clocks down, memory it cannot trust.
 */
export interface IGpuCondition {
  /**
   * `error` for results that may be wrong, `warning` for a GPU slower than
   * it should be, `info` for what is normal under load.
   */
  severity: 'error' | 'warning' | 'info';
  /**
   * A few words, with the reading that shows it ("Thermal slowdown: 87 °C").
   */
  text: string;
  /**
   * What it means and what to do.
   */
  hint: string;
}

/**
 * The conditions of a GPU, the most serious first: uncorrectable memory
 * errors, a memory repair waiting for a reset, then each reason the driver
 * gives for holding the clocks down, in plain words. Idle clocks and clocks
 * set lower on purpose are no condition.
 */
export function gpuConditions(
  gpu: IGpu,
  trans: TranslationBundle
): IGpuCondition[] {
  const conditions: IGpuCondition[] = [];
  const reset = trans.__(
    'Reset the GPU once nothing runs on it: sudo nvidia-smi -r -i %1',
    gpu.index
  );
  if (gpu.ecc_errors_uncorrected) {
    conditions.push({
      severity: 'error',
      text: trans._n(
        '%1 uncorrectable memory error',
        '%1 uncorrectable memory errors',
        gpu.ecc_errors_uncorrected
      ),
      hint:
        trans.__(
          'What ran on this GPU since its driver loaded may have computed wrong results: run it again.'
        ) +
        ' ' +
        reset
    });
  }
  if (gpu.memory_repair_pending) {
    conditions.push({
      severity: 'warning',
      text: trans.__('Memory repair waits for a reset'),
      hint:
        trans.__(
          'The driver takes the failing memory out of use at the next reset.'
        ) +
        ' ' +
        reset
    });
  }
  const reasons = gpu.clock_throttle_reasons ?? [];
  for (const reason of Private.ORDER) {
    if (reasons.includes(reason)) {
      conditions.push(Private.clockCondition(reason, gpu, trans));
    }
  }
  return conditions;
}

/**
 * File-local parts of the conditions.
 */
namespace Private {
  /**
   * The reasons that are a condition, the most serious first.
   */
  export const ORDER: readonly ClockThrottleReason[] = [
    ...SLOWING_REASONS,
    'sw_power_cap',
    'sync_boost'
  ];

  /**
   * One reason the clocks are held down, in plain words.
   */
  export function clockCondition(
    reason: ClockThrottleReason,
    gpu: IGpu,
    trans: TranslationBundle
  ): IGpuCondition {
    const temperature =
      gpu.temperature_c === null ? '' : formatCelsius(gpu.temperature_c, trans);
    const cooling = trans.__(
      'The GPU slows its clocks to cool down: check its fans and the airflow around it.'
    );
    switch (reason) {
      case 'hw_thermal_slowdown':
      case 'sw_thermal_slowdown':
        return {
          severity: 'warning',
          text: temperature
            ? trans.__('Thermal slowdown: %1', temperature)
            : trans.__('Thermal slowdown'),
          hint: cooling
        };
      case 'hw_power_brake_slowdown':
        return {
          severity: 'warning',
          text: trans.__('Power brake slowdown'),
          hint: trans.__(
            'The power supply, or a signal from outside the board, holds the clocks down: ask whoever runs the machine to check its power.'
          )
        };
      case 'hw_slowdown':
        return {
          severity: 'warning',
          text: trans.__('Hardware slowdown'),
          hint: trans.__(
            'The board holds its clocks down, for heat or for power: check its cooling and its power cables.'
          )
        };
      case 'sw_power_cap':
        return {
          severity: 'info',
          text:
            gpu.power_limit_w === null
              ? trans.__('At its power limit')
              : trans.__(
                  'At its power limit: %1',
                  formatWatts(gpu.power_limit_w, trans)
                ),
          hint: trans.__(
            'Normal under full load: the clocks are held so that the board stays within its power limit.'
          )
        };
      default: // sync_boost, the last of ORDER
        return {
          severity: 'info',
          text: trans.__('Held to its group (sync boost)'),
          hint: trans.__(
            'The clocks are held to those of the slowest GPU of its sync boost group.'
          )
        };
    }
  }
}
