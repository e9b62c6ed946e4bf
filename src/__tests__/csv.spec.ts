/**
 * @jest-environment node
 */
import { CSV_HEADER, csvFileName, historyCsv } from '../charts/csv';
import {
  GpuHistoryBuffer,
  MACHINE_FIELDS,
  SERIES_FIELDS
} from '../gpu/history';
import { a5000History } from './payloads';

describe('historyCsv', () => {
  const recorded = a5000History();
  const buffer = new GpuHistoryBuffer();
  buffer.append(recorded);

  it('writes one row per reading and GPU of the window, gaps left out', () => {
    const csv = historyCsv(buffer, recorded.timestamps[36]);
    const rows = csv.split('\r\n').slice(0, -1);

    // 6 readings from the 37th on (the gap is not one), 2 GPUs each, under a
    // header whose columns say their unit.
    expect(rows[0].split(',').slice(0, 8)).toEqual([
      'timestamp',
      'gpu',
      'utilization_gpu_percent',
      'memory_used_mib',
      'temperature_c',
      'power_draw_w',
      'pcie_received_bytes_per_second',
      'nvlink_received_bytes_per_second'
    ]);
    expect(rows).toHaveLength(1 + 6 * 2);
    const time = new Date(recorded.timestamps[36] * 1000).toISOString();
    // The machine's figures of the moment on every GPU's row.
    const machineCells = MACHINE_FIELDS.map(
      field => recorded.machine![field][36] ?? ''
    ).join(',');
    // PCIe received from the XML's sample (439 and 488 KB/s); no NVLink.
    expect(rows[1]).toBe(`${time},0,0,22437,13,6.52,449536,,${machineCells}`);
    expect(rows[2]).toBe(`${time},1,0,17253,15,13.59,499712,,${machineCells}`);
    expect(rows[0].split(',').slice(8)).toEqual(
      MACHINE_FIELDS.map(f => `machine_${f}`)
    );
    expect(CSV_HEADER).toContain('machine_memory_used_mib');
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it('keeps the machine of a reading that read no GPU, in a row without one', () => {
    // The 38th read failed: the server kept the machine, no GPU figure.
    const failed = a5000History();
    for (const gpu of failed.gpus) {
      for (const field of SERIES_FIELDS) {
        gpu[field][37] = null;
      }
    }
    const withFailure = new GpuHistoryBuffer();
    withFailure.append(failed);

    const rows = historyCsv(withFailure, failed.timestamps[37]).split('\r\n');
    const time = new Date(failed.timestamps[37] * 1000).toISOString();
    const cpu = failed.machine!.cpu_percent[37];
    expect(rows[1].startsWith(`${time},,,,,,,,${cpu},`)).toBe(true);
    expect(rows[2].split(',')[1]).toBe('0'); // the next read has its GPUs again
  });

  it('leaves a value the GPU did not report empty', () => {
    const partial = new GpuHistoryBuffer();
    const history = a5000History();
    history.gpus[0].power_draw_w[0] = null;
    partial.append(history);

    const [, first] = historyCsv(partial, 0).split('\r\n');
    expect(first.split(',').slice(1, 6)).toEqual(['0', '0', '22437', '13', '']);
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
