/**
 * @jest-environment node
 */
import { chartData } from '../charts/charts';
import { readingGaps } from '../charts/gapDrawing';
import { GpuHistoryBuffer } from '../gpu/history';
import { a5000History, repeatedHistory } from './payloads';

describe('the gaps in the readings', () => {
  it('are where the recorded sampler stopped for 7 s, and nowhere else', () => {
    const history = new GpuHistoryBuffer();
    history.append(a5000History());

    const gaps = readingGaps(chartData(history, 'utilization'));

    expect(gaps).toHaveLength(1);
    const [[from, to]] = gaps;
    expect(from).toBeCloseTo(1796175790.654, 2);
    expect(to).toBeCloseTo(1796175797.768, 2);
  });

  it('are not between readings made every 5 s for a status bar, but are after them', () => {
    // No chart was shown: the server read when the status bar asked, every 5 s.
    const seldom = repeatedHistory(1796175000, 12, 2, 5);
    seldom.interval_seconds = 1;
    seldom.spacing_seconds = seldom.timestamps.map(() => 5);
    // The panel opened: a reading a second, after 7 s with no reading.
    const live = repeatedHistory(1796175062, 5, 2, 1);
    const history = new GpuHistoryBuffer();
    history.append(seldom);
    history.append(live);

    const gaps = readingGaps(chartData(history, 'utilization'));

    expect(gaps).toEqual([]);
    // Twenty seconds with no reading after 5-second ones: nobody asked.
    const later = repeatedHistory(1796175086, 2, 2, 5);
    later.interval_seconds = 1;
    later.spacing_seconds = [5, 5];
    history.append(later);
    expect(readingGaps(chartData(history, 'utilization'))).toHaveLength(1);
  });

  it('are not a GPU whose readings began later', () => {
    // GPU 1 read only from the third reading on; GPU 0 throughout.
    const data = [
      [1, 2, 3, 4],
      [10, 11, 12, 13],
      [null, null, 5, 6]
    ] as unknown as Parameters<typeof readingGaps>[0];

    expect(readingGaps(data)).toEqual([]);
  });
});
