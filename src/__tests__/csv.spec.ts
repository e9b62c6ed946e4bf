/**
 * @jest-environment node
 */
import { CSV_HEADER, csvFileName, historyCsv } from '../gpu/csv';
import { GpuHistoryBuffer } from '../gpu/history';
import { a5000History } from './payloads';

describe('historyCsv', () => {
  const recorded = a5000History();
  const buffer = new GpuHistoryBuffer();
  buffer.append(recorded);

  it('writes one row per reading and GPU of the window, gaps left out', () => {
    const csv = historyCsv(buffer, recorded.timestamps[36]);
    const rows = csv.split('\r\n').slice(0, -1);

    // 6 readings from the 37th on (the gap is not one), 2 GPUs each.
    expect(rows[0]).toBe(CSV_HEADER.join(','));
    expect(rows).toHaveLength(1 + 6 * 2);
    const time = new Date(recorded.timestamps[36] * 1000).toISOString();
    expect(rows[1]).toBe(`${time},0,0,22437,13,6.52`);
    expect(rows[2]).toBe(`${time},1,0,17253,15,13.59`);
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it('leaves a value the GPU did not report empty', () => {
    const partial = new GpuHistoryBuffer();
    const history = a5000History();
    history.gpus[0].power_draw_w[0] = null;
    partial.append(history);

    const [, first] = historyCsv(partial, 0).split('\r\n');
    expect(first.split(',').slice(1)).toEqual(['0', '0', '22437', '13', '']);
  });

  it('has only the header when the window holds no reading', () => {
    expect(historyCsv(buffer, Infinity)).toBe(CSV_HEADER.join(',') + '\r\n');
  });
});

describe('csvFileName', () => {
  it('names the file after the last reading, in UTC, without colons', () => {
    expect(csvFileName(1796012225.7685041)).toBe(
      'gpu-history-2026-11-30T04-17-05Z.csv'
    );
  });
});
