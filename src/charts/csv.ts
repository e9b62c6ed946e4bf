import { IGpuTimeSeries } from '../tokens';
import { indexAt, MACHINE_FIELDS, SERIES_FIELDS } from '../gpu/history';
import { HISTORY_UNITS } from '../gpu/readings';

/**
 * The header of the exported CSV: one row per reading and GPU, the
 * machine's readings of the moment on each. Each column says its unit: a
 * percentage whose field does not is named `_percent`.
 */
export const CSV_HEADER = [
  'timestamp',
  'gpu',
  ...SERIES_FIELDS.map(field =>
    HISTORY_UNITS[field] === '%' && !field.endsWith('_pct')
      ? `${field}_percent`
      : field
  ),
  ...MACHINE_FIELDS.map(field => `machine_${field}`)
];

/**
 * The readings taken from `fromSeconds` on, as CSV (RFC 4180): an ISO 8601
 * UTC timestamp, the GPU index, the charted measurements and the machine's
 * (CPU, memory, swap, disk and network), empty where not read. A reading
 * without GPUs (none read, or none there) has one row with its machine's
 * figures and no GPU; gaps, where nothing was read, have no row.
 */
export function historyCsv(
  history: IGpuTimeSeries,
  fromSeconds: number
): string {
  const lines = [CSV_HEADER.join(',')];
  const { timestamps, gpus, machine } = history;
  for (let i = indexAt(timestamps, fromSeconds); i < timestamps.length; i++) {
    const time = new Date(timestamps[i] * 1000).toISOString();
    const machineValues = MACHINE_FIELDS.map(field => machine[field][i]);
    const rows: { gpu: number | null; values: (number | null)[] }[] = gpus
      .map(gpu => ({
        gpu: gpu.index,
        values: SERIES_FIELDS.map(field => gpu.values[field][i])
      }))
      .filter(row => row.values.some(value => value !== null));
    if (rows.length === 0 && machineValues.some(value => value !== null)) {
      rows.push({ gpu: null, values: SERIES_FIELDS.map(() => null) });
    }
    for (const row of rows) {
      const cells = [...row.values, ...machineValues];
      lines.push(
        [time, row.gpu ?? '', ...cells.map(value => value ?? '')].join(',')
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
