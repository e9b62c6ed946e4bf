import type uPlot from 'uplot';

import { ITimeSpan } from './chartKinds';
import { indexAt } from '../gpu/history';

/**
 * A chart's readings thinned to what its width can show, kept from one
 * update to the next.
 *
 * The readings in view (one either side, so that the lines run on to the
 * edges) are drawn at two points a pixel column: in each column, every
 * line's lowest and highest reading, in the order they came, so that a peak
 * of one reading in an hour still shows. A column where a line has some
 * readings and lacks others (a gap in the readings) keeps all its readings,
 * so that the gap shows where it was. Data that already fits, or a chart not
 * laid out (no columns), is drawn as it is.
 *
 * An hour of eight GPUs on the dashboard is 3,600 readings for some 600
 * pixels: uPlot, the stripes of lines on each other and the gaps' shading
 * then walk 1,200 points a redraw instead. The columns are fixed in time (a
 * column is a multiple of its width in seconds since the epoch) and the
 * readings only ever grow at the end, so a column once complete is thinned
 * once: each update thins the newest column, and says whether anything a
 * pixel could show changed (a column complete, or the newest one's values
 * a pixel or more from those drawn).
 */
export class ColumnThinning {
  /**
   * What to draw of the chart's readings at `span` in a chart `columns`
   * pixels wide, whose y axis has `pixel` of its unit to a pixel (0:
   * unknown): the data given where it fits, else its readings thinned (each
   * point one of them, at its time); null where the drawing would differ
   * from the last one only by the window sliding on within a pixel column,
   * and need not be made again.
   */
  update(
    data: uPlot.AlignedData,
    span: ITimeSpan | null,
    columns: number,
    pixel = 0
  ): uPlot.AlignedData | null {
    const times = data[0] as number[];
    const from = span ? Math.max(0, indexAt(times, span.min) - 1) : 0;
    const to = span
      ? Math.min(times.length - 1, indexAt(times, span.max))
      : times.length - 1;
    const start = span?.min ?? times[0];
    const end = span?.max ?? times[times.length - 1];
    if (columns < 1 || to - from + 1 <= 2 * columns || !(end > start)) {
      this._kept = null;
      return data;
    }
    const width = (end - start) / columns;
    const kept = this._keptFor(data, width);
    // Thin what is new since: the columns not yet complete.
    const open: Private.IPoints = Private.points(kept.lines.length);
    const newest = Math.floor(times[times.length - 1] / width);
    let first = from;
    if (kept.lastReading !== null) {
      // After the last reading kept (by time: a column's number times its
      // width need not give back the time of its first reading).
      const at = indexAt(times, kept.lastReading);
      first = Math.max(from, times[at] === kept.lastReading ? at + 1 : at);
    }
    let added = false;
    while (first <= to) {
      const column = Math.floor(times[first] / width);
      let last = first;
      while (last < to && Math.floor(times[last + 1] / width) === column) {
        last++;
      }
      const complete = column < newest;
      Private.thinColumn(data, first, last, complete ? kept : open);
      if (complete) {
        kept.lastReading = times[last];
        added = true;
      }
      first = last + 1;
    }
    if (added) {
      // Complete columns that have left the view go, a column at a time
      // (until then the chart's x scale hides them).
      let gone = 0;
      while (gone < kept.times.length && kept.times[gone] < times[from]) {
        gone++;
      }
      kept.times.splice(0, gone);
      kept.lines.forEach(values => values.splice(0, gone));
    }
    const extents = open.lines.map(Private.extent);
    if (!added && Private.sameExtents(extents, this._drawnExtents, pixel)) {
      return null;
    }
    this._drawnExtents = extents;
    return [
      [...kept.times, ...open.times],
      ...kept.lines.map((values, line) => [...values, ...open.lines[line]])
    ];
  }

  /**
   * The complete columns kept, anew when the chart's columns or its lines
   * are no longer those they were thinned for.
   */
  private _keptFor(data: uPlot.AlignedData, width: number): Private.IKept {
    const kept = this._kept;
    const times = data[0] as number[];
    if (
      kept !== null &&
      kept.width === width &&
      kept.source.length === data.length &&
      kept.source.every((values, line) => values === data[line]) &&
      // Readings that went back in time: the history was filled anew.
      (kept.times.length === 0 ||
        times[times.length - 1] >= kept.times[kept.times.length - 1])
    ) {
      return kept;
    }
    this._drawnExtents = null;
    this._kept = {
      ...Private.points(data.length - 1),
      width,
      source: [...data],
      lastReading: null
    };
    return this._kept;
  }

  private _kept: Private.IKept | null = null;
  // Each line's extent in the newest column, as last drawn.
  private _drawnExtents: Private.IExtent[] | null = null;
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * A line's readings.
   */
  export type Column = ArrayLike<number | null | undefined>;

  /**
   * Points to draw: their times and each line's values.
   */
  export interface IPoints {
    times: number[];
    lines: (number | null)[][];
  }

  /**
   * The points of complete columns, and what they were thinned from.
   */
  export interface IKept extends IPoints {
    /**
     * A column's width, in seconds.
     */
    width: number;
    /**
     * The columns of the data thinned (the times, then each line).
     */
    source: uPlot.AlignedData[number][];
    /**
     * The time of the last reading of the complete columns kept; null
     * before the first.
     */
    lastReading: number | null;
  }

  /**
   * No points, for `count` lines.
   */
  export function points(count: number): IPoints {
    return {
      times: [],
      lines: Array.from({ length: count }, () => [])
    };
  }

  /**
   * Add the points of the column of readings `first` to `last` to `into`.
   */
  export function thinColumn(
    data: uPlot.AlignedData,
    first: number,
    last: number,
    into: IPoints
  ): void {
    const times = data[0] as number[];
    const series = data.slice(1) as Column[];
    const extremes =
      last > first
        ? series.map(values => lineExtremes(values, first, last))
        : null;
    if (extremes === null || extremes.includes(undefined)) {
      for (let position = first; position <= last; position++) {
        into.times.push(times[position]);
        series.forEach((values, line) =>
          into.lines[line].push(values[position] ?? null)
        );
      }
      return;
    }
    into.times.push(times[first], times[last]);
    extremes.forEach((pair, line) => into.lines[line].push(...pair!));
  }

  /**
   * A line's lowest and highest reading from `first` to `last`, the one
   * that came first first; nulls where it has no reading there at all (a
   * GPU not yet seen), and undefined where it has some and lacks some (the
   * edge of a gap, which must keep its place).
   */
  export function lineExtremes(
    values: Column,
    first: number,
    last: number
  ): [number | null, number | null] | undefined {
    let low = -1;
    let high = -1;
    let missing = 0;
    for (let position = first; position <= last; position++) {
      const value = values[position];
      if (value === null || value === undefined) {
        missing++;
      } else {
        if (low < 0 || value < (values[low] as number)) {
          low = position;
        }
        if (high < 0 || value > (values[high] as number)) {
          high = position;
        }
      }
    }
    if (missing === last - first + 1) {
      return [null, null];
    }
    if (missing > 0) {
      return undefined;
    }
    const lowest = values[low] as number;
    const highest = values[high] as number;
    return low <= high ? [lowest, highest] : [highest, lowest];
  }

  /**
   * A line's lowest and highest value in a column, and whether it lacks a
   * reading there.
   */
  export interface IExtent {
    low: number;
    high: number;
    lacking: boolean;
  }

  export function extent(values: (number | null)[]): IExtent {
    const present = values.filter((value): value is number => value !== null);
    return {
      low: Math.min(...present),
      high: Math.max(...present),
      lacking: present.length < values.length
    };
  }

  /**
   * Whether each line of the newest column draws as it was drawn: its
   * lowest and highest value within `pixel` of the drawing's, lacking a
   * reading as it did. Where in a column a reading falls does not show,
   * nor does a change of less than a pixel.
   */
  export function sameExtents(
    now: IExtent[],
    drawn: IExtent[] | null,
    pixel: number
  ): boolean {
    const near = (a: number, b: number) => a === b || Math.abs(a - b) < pixel;
    return (
      drawn !== null &&
      now.length === drawn.length &&
      now.every(
        (line, index) =>
          line.lacking === drawn[index].lacking &&
          near(line.low, drawn[index].low) &&
          near(line.high, drawn[index].high)
      )
    );
  }
}
