/**
 * The share of a GPU's memory in use, in percent, from which the views tell
 * it as nearly full (warning colour, and in words). PyTorch's caching
 * allocator keeps what it freed, so a run that reached 95 % stays there, and
 * the next allocation that does not fit fails with "CUDA out of memory"; a
 * bar at 95 % looks much like one at 60 % unless it says so.
 */
export const NEARLY_FULL_PERCENT = 95;

/**
 * Whether memory in use is at or above {@link NEARLY_FULL_PERCENT} of the
 * total; false when either is unknown.
 */
export function isNearlyFull(
  usedMiB: number | null,
  totalMiB: number | null
): boolean {
  return (
    usedMiB !== null &&
    totalMiB !== null &&
    totalMiB > 0 &&
    usedMiB * 100 >= totalMiB * NEARLY_FULL_PERCENT
  );
}
