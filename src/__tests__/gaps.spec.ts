/**
 * @jest-environment node
 */
import { chartData } from '../gpu/charts';
import { readingGaps } from '../gpu/gapDrawing';
import { GpuHistoryBuffer } from '../gpu/history';
import { a5000History } from './payloads';

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
