import { IGpuTimeSeries } from '../tokens';
import { indexAt, SERIES_FIELDS } from './history';

/**
 * The header of the exported CSV: one row per reading and GPU.
 */
export const CSV_HEADER = [
  'timestamp',
  'gpu',
  'utilization_gpu_percent',
  'memory_used_mib',
  'temperature_c',
  'power_draw_w'
];

/**
 * The readings taken from `fromSeconds` on, as CSV (RFC 4180): an ISO 8601
 * UTC timestamp, the GPU index and the charted measurements, empty where not
 * read. Gaps, where no GPU was read, have no row.
 */
export function historyCsv(
  history: IGpuTimeSeries,
  fromSeconds: number
): string {
  const lines = [CSV_HEADER.join(',')];
  const { timestamps, gpus } = history;
  for (let i = indexAt(timestamps, fromSeconds); i < timestamps.length; i++) {
    const time = new Date(timestamps[i] * 1000).toISOString();
    for (const gpu of gpus) {
      const values = SERIES_FIELDS.map(field => gpu.values[field][i]);
      if (values.every(value => value === null)) {
        continue;
      }
      lines.push(
        [time, gpu.index, ...values.map(value => value ?? '')].join(',')
      );
    }
  }
  return lines.join('\r\n') + '\r\n';
}

/**
 * The name of the file the readings up to `lastSeconds` are saved to:
 * `gpu-history-2026-11-30T04-08-46Z.csv`.
 */
export function csvFileName(lastSeconds: number): string {
  const time = new Date(lastSeconds * 1000)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
  return `gpu-history-${time}.csv`;
}
