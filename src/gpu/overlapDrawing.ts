import type uPlot from 'uplot';

import { indexAt } from './history';

/**
 * A stretch of readings over which several lines lie on each other.
 */
export interface ISharedRun {
  /**
   * The position of its first reading in the data.
   */
  from: number;
  /**
   * The position of its last reading (after `from`).
   */
  to: number;
  /**
   * The lines on each other there, by their column in the data (1 is the
   * first line after the time), in order.
   */
  series: number[];
}

/**
 * The stretches over which two or more lines are drawn on each other: at
 * both ends of each segment their values differ by at most `tolerance`
 * (about a pixel of the y axis). Eight idle GPUs at 0 % are one such
 * stretch of eight lines. Only the readings from `first` to `last` are
 * looked at (those in view).
 */
export function sharedRuns(
  data: uPlot.AlignedData,
  tolerance: number,
  first = 0,
  last = data[0].length - 1
): ISharedRun[] {
  const series = data.slice(1);
  const runs: ISharedRun[] = [];
  // The run each set of lines is in now, by its members.
  let open = new Map<string, ISharedRun>();
  let clusters = clustersAt(series, first, tolerance);
  for (let at = first; at < last; at++) {
    const next = clustersAt(series, at + 1, tolerance);
    const still = new Map<string, ISharedRun>();
    for (const members of segmentGroups(clusters, next)) {
      const key = members.join(',');
      const run = open.get(key) ?? { from: at, to: at + 1, series: members };
      run.to = at + 1;
      if (!open.has(key)) {
        runs.push(run);
      }
      still.set(key, run);
    }
    open = still;
    clusters = next;
  }
  return runs;
}

/**
 * Draw each stretch where lines lie on each other as one line striped in
 * their colours, each colour a dash in turn, so that every GPU on it shows.
 *
 * @param colors - each line's colour, in the order of the data's columns
 * after the time
 */
export function drawOverlaps(
  plot: uPlot,
  colors: readonly string[],
  width: number
): void {
  const pixel = Math.abs(plot.posToVal(0, 'y') - plot.posToVal(1.5, 'y'));
  // The readings in view, one either side: the lines run on to the edges.
  const times = plot.data[0] as number[];
  const { min, max } = plot.scales.x;
  const runs = sharedRuns(
    plot.data,
    pixel,
    Math.max(0, indexAt(times, min ?? -Infinity) - 1),
    Math.min(times.length - 1, indexAt(times, max ?? Infinity))
  );
  if (runs.length === 0) {
    return;
  }
  const { ctx, bbox } = plot;
  const dash = STRIPE_PX * devicePixelRatio;
  ctx.save();
  ctx.beginPath();
  ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
  ctx.clip();
  ctx.lineWidth = width * devicePixelRatio;
  ctx.lineJoin = 'round';
  for (const { from, to, series } of runs) {
    const values = plot.data[series[0]];
    ctx.setLineDash([dash, dash * (series.length - 1)]);
    series.forEach((column, place) => {
      ctx.strokeStyle = colors[column - 1] ?? '';
      // Each line's dash a place further along: the colours take turns.
      ctx.lineDashOffset = -place * dash;
      ctx.beginPath();
      for (let at = from; at <= to; at++) {
        const x = plot.valToPos(times[at], 'x', true);
        const y = plot.valToPos(values[at] as number, 'y', true);
        if (at === from) {
          ctx.moveTo(x, y);
        } else {
          ctx.lineTo(x, y);
        }
      }
      ctx.stroke();
    });
  }
  ctx.restore();
}

/**
 * How long each colour's dash is, in CSS pixels: short enough that eight
 * colours show within 50 pixels, long enough to tell each colour.
 */
const STRIPE_PX = 5;

/**
 * The lines at one reading grouped by value: each line's group, by the
 * first line of the group; a line with no reading there is in none.
 */
function clustersAt(
  series: uPlot.AlignedData[number][],
  at: number,
  tolerance: number
): (number | null)[] {
  const present = series
    .map((values, column) => ({ column, value: values[at] }))
    .filter(
      (line): line is { column: number; value: number } =>
        typeof line.value === 'number' && Number.isFinite(line.value)
    )
    .sort((a, b) => a.value - b.value);
  const group: (number | null)[] = series.map(() => null);
  let first = -1;
  present.forEach((line, place) => {
    if (place === 0 || line.value - present[place - 1].value > tolerance) {
      first = line.column;
    }
    group[line.column] = first;
  });
  return group;
}

/**
 * The sets of two or more lines (by data column) that are together at both
 * ends of a segment.
 */
function segmentGroups(
  start: (number | null)[],
  end: (number | null)[]
): number[][] {
  const groups = new Map<string, number[]>();
  start.forEach((group, line) => {
    if (group === null || end[line] === null) {
      return;
    }
    const key = `${group}:${end[line]}`;
    groups.set(key, [...(groups.get(key) ?? []), line + 1]);
  });
  return [...groups.values()].filter(members => members.length > 1);
}
