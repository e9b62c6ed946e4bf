import { IKernelSummary } from '../restapi/kernels';

/**
 * How long an idle kernel must have held GPU memory for nothing before the
 * views say so: every cell that ends leaves its kernel idle with its memory,
 * which is no news for a minute.
 */
export const IDLE_HELD_SHOWN_SECONDS = 60;

/**
 * How long a kernel has held GPUs idle, and how much memory it holds there.
 */
export interface IIdleHeld {
  /**
   * Since the first of its GPUs became idle-held, in seconds.
   */
  seconds: number;
  /**
   * The memory it holds on its idle-held GPUs, in MiB.
   */
  mib: number;
}

/**
 * The kernel's idle-held GPUs as the server counts them (`idle_held_since`)
 * at `now` (the time of the latest read, on the server's clock); null when
 * none, or for less than {@link IDLE_HELD_SHOWN_SECONDS}.
 */
export function idleHeld(
  kernel: IKernelSummary,
  now: number
): IIdleHeld | null {
  const held = kernel.gpus.filter(gpu => gpu.idle_held_since !== null);
  if (held.length === 0) {
    return null;
  }
  const seconds = now - Math.min(...held.map(gpu => gpu.idle_held_since!));
  if (seconds < IDLE_HELD_SHOWN_SECONDS) {
    return null;
  }
  return {
    seconds,
    mib: held.reduce((sum, gpu) => sum + gpu.memory_used_mib, 0)
  };
}
