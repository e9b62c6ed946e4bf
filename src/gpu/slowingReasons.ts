import { ClockThrottleReason } from '../restapi/gpus';

/**
 * The reasons for holding the clocks down that slow a GPU below what it
 * should do, the most serious first (a power cap or sync boost is normal
 * under load). Apart from the conditions that word them: the alerts, loaded
 * with JupyterLab, need only this list.
 */
export const SLOWING_REASONS: readonly ClockThrottleReason[] = [
  'hw_thermal_slowdown',
  'sw_thermal_slowdown',
  'hw_power_brake_slowdown',
  'hw_slowdown'
];
