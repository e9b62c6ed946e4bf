/**
 * @jest-environment node
 */
import { GpuHistoryBuffer, indexAt } from '../gpu/history';
import { a5000History, repeatedHistory } from './payloads';

describe('GpuHistoryBuffer', () => {
  it('keeps the recorded readings in one column per GPU and measurement', () => {
    const recorded = a5000History();
    const buffer = new GpuHistoryBuffer();

    expect(buffer.append(recorded)).toBe(true);

    expect(buffer.gpus.map(gpu => gpu.index)).toEqual([0, 1]);
    expect(buffer.gpus[0].name).toBe('NVIDIA RTX A5000');
    expect(buffer.gpus[0].values.memory_used_mib[0]).toBe(22437);
    expect(buffer.gpus[1].values.power_draw_w[0]).toBe(13.59);
    expect(buffer.intervalSeconds).toBe(1);
    expect(buffer.capacity).toBe(3600);
  });

  it('breaks the lines where the server did not sample, with one null reading', () => {
    const recorded = a5000History();
    const buffer = new GpuHistoryBuffer();

    buffer.append(recorded);

    // The readings, and one gap where the sampler stopped: the reading
    // after it came more than two intervals after the one before.
    const { timestamps } = recorded;
    const gap = timestamps.findIndex(
      (time, i) => i > 0 && time - timestamps[i - 1] > 2
    );
    expect(gap).toBeGreaterThan(0);
    expect(buffer.timestamps).toHaveLength(timestamps.length + 1);
    expect(buffer.timestamps[gap]).toBeCloseTo(timestamps[gap - 1] + 1);
    for (const gpu of buffer.gpus) {
      expect(gpu.values.utilization_gpu[gap]).toBeNull();
      expect(gpu.values.memory_used_mib[gap]).toBeNull();
      expect(gpu.values.memory_used_mib[gap - 1]).not.toBeNull();
      expect(gpu.values.memory_used_mib[gap + 1]).not.toBeNull();
    }
    expect(buffer.timestamps).toEqual([...buffer.timestamps].sort());
  });

  it('adds only the readings after the newest it has, as a since= answer gives', () => {
    const recorded = a5000History();
    const buffer = new GpuHistoryBuffer();
    buffer.append(recorded);
    const revision = buffer.revision;

    // An answer that repeats the last reading: nothing new.
    const repeat = { ...recorded, timestamps: recorded.timestamps.slice(-1) };
    repeat.gpus = recorded.gpus.map(gpu => ({
      ...gpu,
      memory_used_mib: gpu.memory_used_mib.slice(-1)
    }));
    expect(buffer.append(repeat)).toBe(false);
    expect(buffer.revision).toBe(revision);

    const length = buffer.timestamps.length;
    const next = repeatedHistory(
      recorded.timestamps[recorded.timestamps.length - 1] + 1,
      2
    );
    expect(buffer.append(next)).toBe(true);
    expect(buffer.revision).toBe(revision + 1);
    expect(buffer.timestamps).toHaveLength(length + 2);
  });

  it('starts a GPU that appears with nulls, and gives a missing GPU nulls', () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append(repeatedHistory(1000, 3, 1));

    buffer.append(repeatedHistory(1003, 2, 2));
    const [first, second] = buffer.gpus;
    expect(second.values.temperature_c).toEqual([null, null, null, 13, 13]);

    buffer.append({ ...repeatedHistory(1005, 1, 2), gpus: [] });
    expect(first.values.temperature_c[5]).toBeNull();
    expect(second.values.temperature_c[5]).toBeNull();
    expect(first.values.temperature_c).toHaveLength(6);
  });

  it('never holds more than an hour of readings plus its slack', () => {
    const buffer = new GpuHistoryBuffer();
    let start = 0;
    let most = 0;
    // Two hours, a minute at a time.
    for (let minute = 0; minute < 120; minute++) {
      buffer.append(repeatedHistory(start, 60, 8));
      start += 60;
      most = Math.max(most, buffer.timestamps.length);
    }
    expect(buffer.capacity).toBe(3600);
    expect(most).toBeLessThanOrEqual(buffer.capacity + buffer.slack + 60);
    for (const gpu of buffer.gpus) {
      expect(gpu.values.power_draw_w).toHaveLength(buffer.timestamps.length);
    }
    // The newest are kept, the oldest dropped.
    expect(buffer.lastTimestamp).toBe(start - 1);
    expect(buffer.timestamps[0]).toBeGreaterThanOrEqual(
      start - buffer.capacity - buffer.slack - 60
    );
  });

  it('drops old readings a chunk at a time, not on every reading', () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append(repeatedHistory(0, 3600, 1));
    let drops = 0;
    let length = buffer.timestamps.length;
    for (let second = 3600; second < 3600 + 10 * buffer.slack; second++) {
      buffer.append(repeatedHistory(second, 1, 1));
      if (buffer.timestamps.length < length) {
        drops++;
      }
      length = buffer.timestamps.length;
    }
    expect(drops).toBeLessThanOrEqual(10);
    expect(drops).toBeGreaterThanOrEqual(9);
  });

  it('follows the interval and span the server reports', () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append({
      ...repeatedHistory(0, 10, 1, 0.5),
      history_seconds: 600
    });
    expect(buffer.intervalSeconds).toBe(0.5);
    expect(buffer.capacity).toBe(1200);
    // 0.5 s apart is no gap at a 0.5 s interval.
    expect(buffer.timestamps).toHaveLength(10);
  });
});

describe('indexAt', () => {
  it('finds the first timestamp at or after a time', () => {
    const timestamps = [10, 11, 12, 15];
    expect(indexAt(timestamps, 0)).toBe(0);
    expect(indexAt(timestamps, 11)).toBe(1);
    expect(indexAt(timestamps, 13)).toBe(3);
    expect(indexAt(timestamps, 16)).toBe(4);
    expect(indexAt([], 16)).toBe(0);
  });
});
