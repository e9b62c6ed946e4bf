import type uPlot from 'uplot';

import { chartData } from '../charts/charts';
import { GpuHistoryBuffer } from '../gpu/history';
import { sharedRuns } from '../charts/overlapDrawing';
import { a5000History, repeatedHistory } from './payloads';

describe('sharedRuns', () => {
  it('finds eight idle GPUs drawn on each other as one run of eight lines', () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append(repeatedHistory(1000, 60, 8));

    const runs = sharedRuns(chartData(buffer, 'utilization'), 0.5);

    expect(runs).toEqual([
      { from: 0, to: 59, series: [1, 2, 3, 4, 5, 6, 7, 8] }
    ]);
  });

  it('lets a line go when it parts from the others', () => {
    const data: uPlot.AlignedData = [
      [0, 1, 2, 3],
      [0, 0, 50, 50],
      [0, 0, 0.4, 0],
      [0, 0, 0, 0]
    ];

    expect(sharedRuns(data, 0.5)).toEqual([
      { from: 0, to: 1, series: [1, 2, 3] },
      { from: 1, to: 3, series: [2, 3] }
    ]);
  });

  it('counts lines within the tolerance (about a pixel) as on each other', () => {
    const data: uPlot.AlignedData = [
      [0, 1],
      [10, 10],
      [10.4, 11]
    ];

    expect(sharedRuns(data, 0.5)).toEqual([]);
    expect(sharedRuns(data, 1)).toEqual([{ from: 0, to: 1, series: [1, 2] }]);
  });

  it('breaks at a gap in the readings and looks only at the readings asked', () => {
    // The A5000s' recorded history: both idle at 0 %, one reading of nulls
    // where the sampler paused.
    const buffer = new GpuHistoryBuffer();
    buffer.append(a5000History());
    const data = chartData(buffer, 'utilization');
    const gap = (data[1] as (number | null)[]).indexOf(null);

    const runs = sharedRuns(data, 0.5);

    expect(runs.every(run => run.to < gap || run.from > gap)).toBe(true);
    expect(runs.length).toBeGreaterThan(0);
    expect(
      sharedRuns(data, 0.5, gap + 1).every(run => run.from >= gap + 1)
    ).toBe(true);
  });
});
