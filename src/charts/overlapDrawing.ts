import type uPlot from 'uplot';

import { indexAt } from '../gpu/history';

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
 *
 * It runs at every redraw of every chart, over an hour of readings on the
 * dashboard: nothing is allocated per reading, and a set of lines is known
 * by the sum of its lines' powers of two.
 */
export function sharedRuns(
  data: uPlot.AlignedData,
  tolerance: number,
  first = 0,
  last = data[0].length - 1
): ISharedRun[] {
  const series = data.slice(1) as Private.Column[];
  const runs: ISharedRun[] = [];
  if (series.length < 2 || series.length > Private.MAX_LINES) {
    return runs;
  }
  const order = new Int32Array(series.length);
  let start = new Int32Array(series.length);
  let end = new Int32Array(series.length);
  // Per segment: the lines going from one group to one other, by the pair.
  const together = new Map<number, number>();
  // The run each set of lines is in now, by its set; the next segment's.
  let open = new Map<number, ISharedRun>();
  let still = new Map<number, ISharedRun>();
  Private.groupAt(series, first, tolerance, start, order);
  for (let at = first; at < last; at++) {
    Private.groupAt(series, at + 1, tolerance, end, order);
    together.clear();
    for (let line = 0; line < series.length; line++) {
      if (start[line] >= 0 && end[line] >= 0) {
        const pair = start[line] * Private.MAX_LINES + end[line];
        together.set(pair, (together.get(pair) ?? 0) + 2 ** line);
      }
    }
    still.clear();
    for (const set of together.values()) {
      if (Number.isInteger(Math.log2(set))) {
        continue; // one line alone
      }
      let run = open.get(set);
      if (run === undefined) {
        run = { from: at, to: at + 1, series: Private.members(set) };
        runs.push(run);
      }
      run.to = at + 1;
      still.set(set, run);
    }
    [open, still] = [still, open];
    [start, end] = [end, start];
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
 * File-local helpers.
 */
namespace Private {
  /**
   * A line's readings.
   */
  export type Column = ArrayLike<number | null | undefined>;

  /**
   * The most lines a set of them can be summed for exactly (2 ** 52 is the
   * largest power of two a double adds without loss); a chart of more has
   * no stripes.
   */
  export const MAX_LINES = 52;

  /**
   * The lines at one reading grouped by value, into `group`: each line's
   * group, by the first line of the group; -1 for a line with no reading
   * there. `order` is room to sort the lines in.
   */
  export function groupAt(
    series: Column[],
    at: number,
    tolerance: number,
    group: Int32Array,
    order: Int32Array
  ): void {
    let count = 0;
    for (let line = 0; line < series.length; line++) {
      group[line] = -1;
      const value = series[line][at];
      if (typeof value === 'number' && Number.isFinite(value)) {
        // Insertion sort, stable: a handful of lines.
        let place = count++;
        while (place > 0 && (series[order[place - 1]][at] as number) > value) {
          order[place] = order[place - 1];
          place--;
        }
        order[place] = line;
      }
    }
    let first = -1;
    for (let place = 0; place < count; place++) {
      const line = order[place];
      const value = series[line][at] as number;
      if (
        place === 0 ||
        value - (series[order[place - 1]][at] as number) > tolerance
      ) {
        first = line;
      }
      group[line] = first;
    }
  }

  /**
   * The data columns (1 is the first line) of the lines of a set.
   */
  export function members(set: number): number[] {
    const columns: number[] = [];
    for (let line = 0; line < MAX_LINES && 2 ** line <= set; line++) {
      if (Math.floor(set / 2 ** line) % 2 === 1) {
        columns.push(line + 1);
      }
    }
    return columns;
  }
}
