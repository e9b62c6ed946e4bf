/**
 * The GPUs hidden from the dashboard's charts after a click on one in a
 * legend: a click shows or hides it, Shift+click shows it alone (or, when
 * it is already alone, every GPU again). The last GPU shown is not hidden:
 * a chart with no line tells nothing.
 *
 * @param hidden - the GPUs hidden now, by index
 * @param all - every GPU the charts draw, by index
 */
export function toggleGpu(
  hidden: ReadonlySet<number>,
  index: number,
  solo: boolean,
  all: readonly number[]
): ReadonlySet<number> {
  const shown = all.filter(gpu => !hidden.has(gpu));
  if (solo) {
    const alone = shown.length === 1 && shown[0] === index;
    return new Set(alone ? [] : all.filter(gpu => gpu !== index));
  }
  if (hidden.has(index)) {
    return new Set([...hidden].filter(gpu => gpu !== index));
  }
  return shown.length <= 1 ? hidden : new Set([...hidden, index]);
}
