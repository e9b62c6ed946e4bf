import type uPlot from 'uplot';

import { readingGaps } from '../charts/gapDrawing';
import { ColumnThinning } from '../charts/thinning';
import { a5000History } from './payloads';

const HOUR = 3600;
const START = 1_800_000_000;

/**
 * An hour of eight GPUs, a reading a second: each GPU's utilization moving
 * as a training job's does, GPU 5 spiking to 100 % for one reading.
 */
function hourOfEightGpus(): uPlot.AlignedData {
  const times = Array.from({ length: HOUR }, (_, i) => START + i);
  const lines = Array.from({ length: 8 }, (_, gpu) =>
    times.map((_, i) => 40 + 30 * Math.sin((i + gpu * 90) / 200))
  );
  lines[5][1234] = 100;
  return [times, ...lines];
}

const span = { min: START, max: START + HOUR - 1 };

describe('ColumnThinning', () => {
  it('draws an hour at two points a pixel column, every peak kept', () => {
    const data = hourOfEightGpus();

    const thinned = new ColumnThinning().update(data, span, 700)!;

    expect(thinned[0].length).toBeLessThanOrEqual(2 * 700 + 2);
    expect(thinned[0].length).toBeGreaterThan(700);
    for (let line = 1; line <= 8; line++) {
      const values = thinned[line] as number[];
      const given = data[line] as number[];
      expect(Math.max(...values)).toBe(Math.max(...given));
      expect(Math.min(...values)).toBe(Math.min(...given));
    }
    // Each point is a reading of the data given, at its time.
    for (const time of thinned[0]) {
      expect(data[0]).toContain(time);
    }
  });

  it('keeps its columns in place as the window slides on', () => {
    const data = hourOfEightGpus();
    const before = new ColumnThinning().update(data, span, 700)!;

    const later = { min: span.min + 1, max: span.max + 1 };
    const after = new ColumnThinning().update(
      [
        [...(data[0] as number[]), START + HOUR],
        ...data.slice(1).map(values => [...(values as number[]), 50])
      ],
      later,
      700
    )!;

    // The points of the columns both windows show whole are the same.
    const shared = (after[0] as number[]).filter(
      time => time > START + 10 && time < START + HOUR - 10
    );
    const at = (data: uPlot.AlignedData, time: number) =>
      data.map(values => values[(data[0] as number[]).indexOf(time)]);
    for (const time of shared) {
      expect(at(after, time)).toEqual(at(before, time));
    }
  });

  it('keeps a gap in the readings where it was', () => {
    const data = hourOfEightGpus();
    for (let line = 1; line <= 8; line++) {
      (data[line] as (number | null)[])[2000] = null;
    }

    const thinned = new ColumnThinning().update(data, span, 700)!;

    expect(readingGaps(thinned)).toEqual(readingGaps(data));
    expect(readingGaps(thinned)).toEqual([[START + 1999, START + 2001]]);
  });

  it('gives back data that already fits as it is', () => {
    const data: uPlot.AlignedData = [
      a5000History().timestamps,
      ...a5000History().gpus.map(gpu => gpu.utilization_gpu)
    ];

    expect(new ColumnThinning().update(data, null, 700)).toBe(data);
  });

  it('thins each column once, and tells when a reading changes nothing a pixel shows', () => {
    // The hour growing a reading at a time, as the dashboard's live window.
    const data = hourOfEightGpus() as number[][];
    const thinning = new ColumnThinning();
    const live = (): ReturnType<ColumnThinning['update']> => {
      const times = data[0];
      const last = times[times.length - 1];
      return thinning.update(
        data as uPlot.AlignedData,
        { min: last - HOUR, max: last },
        700
      );
    };
    live();
    const grow = (value: number): void => {
      data[0].push(data[0][data[0].length - 1] + 1);
      data.slice(1).forEach(values => values.push(value));
    };
    // Readings within the newest column's lowest and highest change nothing
    // a pixel shows: nothing to draw again until a column is complete
    // (a column is 3600 / 700 readings wide).
    const steady = data[1][data[1].length - 1];
    let drawing: uPlot.AlignedData | null = null;
    let skipped = 0;
    while (drawing === null) {
      grow(steady);
      drawing = live();
      skipped += drawing === null ? 1 : 0;
    }
    skipped = 0;
    drawing = null;
    while (drawing === null) {
      grow(steady);
      drawing = live();
      skipped += drawing === null ? 1 : 0;
    }
    expect(skipped).toBeGreaterThanOrEqual(4);
    // Then the points drawn are those of thinning the hour afresh.
    const last = data[0][data[0].length - 1];
    const afresh = new ColumnThinning().update(
      data as uPlot.AlignedData,
      { min: last - HOUR, max: last },
      700
    )!;
    // What the window shows (the incremental one keeps a column before it,
    // hidden by the x scale, until the next column is complete).
    const inView = (drawn: uPlot.AlignedData) => {
      const from = (drawn[0] as number[]).findIndex(
        time => time >= last - HOUR
      );
      return drawn.map(values => Array.from(values).slice(from));
    };
    expect(inView(drawing)).toEqual(inView(afresh));
    // A peak in the newest column is a change.
    grow(100);
    expect(live()).not.toBeNull();
  });
});
