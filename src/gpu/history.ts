import { GpuSeriesField, IGpuColumns, IGpuTimeSeries } from '../tokens';
import { IGpuHistory, IGpuSeries, IMachineSeries } from '../restapi/gpus';

/**
 * The measurements kept for the charts, in the order the charts show them.
 */
export const SERIES_FIELDS: readonly GpuSeriesField[] = [
  'utilization_gpu',
  'memory_used_mib',
  'temperature_c',
  'power_draw_w',
  'pcie_received_bytes_per_second',
  'nvlink_received_bytes_per_second'
];

/**
 * The machine's measurements kept, as the server's history has them.
 */
export const MACHINE_FIELDS: readonly (keyof IMachineSeries)[] = [
  'cpu_percent',
  'memory_used_mib',
  'memory_total_mib',
  'swap_used_mib',
  'disk_read_bytes_per_second',
  'disk_write_bytes_per_second',
  'network_received_bytes_per_second',
  'network_sent_bytes_per_second'
];

/**
 * Empty columns of the machine's measurements.
 */
function machineColumns(): IMachineSeries {
  const columns = {} as IMachineSeries;
  for (const field of MACHINE_FIELDS) {
    columns[field] = [];
  }
  return columns;
}

/**
 * Two readings further apart than this many sampling intervals (or, for a
 * reading the server made for a client that asks seldom, its period) have a
 * gap between them: nobody watched, or the GPUs could not be read. A slow
 * read stretches one interval a little; it does not triple it.
 */
const GAP_INTERVALS = 3;

/**
 * The position of the first of `timestamps` (sorted, oldest first) at or
 * after `timestamp`; `timestamps.length` when there is none.
 */
export function indexAt(
  timestamps: readonly number[],
  timestamp: number
): number {
  let low = 0;
  let high = timestamps.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (timestamps[middle] < timestamp) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

/**
 * Whether two readings are of the same GPU: by UUID, or by index for a
 * source that gives no UUID.
 */
export function sameGpu(
  a: { uuid: string | null; index: number },
  b: { uuid: string | null; index: number }
): boolean {
  return a.uuid !== null || b.uuid !== null
    ? a.uuid === b.uuid
    : a.index === b.index;
}

/**
 * A copy of a history as it is now, which later readings do not change: what
 * a paused chart draws.
 */
export function frozenHistory(history: IGpuTimeSeries): IGpuTimeSeries {
  return {
    timestamps: history.timestamps.slice(),
    gpus: history.gpus.map(gpu => ({
      index: gpu.index,
      uuid: gpu.uuid,
      name: gpu.name,
      values: Private.gpuValues(field => gpu.values[field].slice())
    })),
    machine: MACHINE_FIELDS.reduce((columns, field) => {
      columns[field] = history.machine[field].slice();
      return columns;
    }, machineColumns()),
    intervalSeconds: history.intervalSeconds,
    revision: history.revision
  };
}

/**
 * The readings of the last `historySeconds`, in columns that uPlot draws
 * as they are: appending a reading pushes one value per column, and the
 * oldest readings are dropped a chunk at a time, so a reading costs the same
 * however long the history is.
 */
export class GpuHistoryBuffer implements IGpuTimeSeries {
  /**
   * Create an empty history.
   */
  constructor(options: GpuHistoryBuffer.IOptions = {}) {
    this._historySeconds = options.historySeconds ?? 3600;
    this._intervalSeconds = options.intervalSeconds ?? 1;
  }

  /**
   * When each reading was taken, in seconds since the epoch, oldest first.
   */
  get timestamps(): readonly number[] {
    return this._timestamps;
  }

  /**
   * The columns of each GPU, by index.
   */
  get gpus(): readonly IGpuColumns[] {
    return this._gpus;
  }

  /**
   * The machine's columns, null where a reading has none.
   */
  get machine(): Readonly<IMachineSeries> {
    return this._machine;
  }

  /**
   * The time between two readings on the server, in seconds.
   */
  get intervalSeconds(): number {
    return this._intervalSeconds;
  }

  /**
   * Grows by one each time readings are added or dropped.
   */
  get revision(): number {
    return this._revision;
  }

  /**
   * The most readings kept (gaps count as readings): the server's history
   * span at its sampling interval. Up to {@link slack} more are held until
   * the next chunk is dropped.
   */
  get capacity(): number {
    return Math.ceil(this._historySeconds / this._intervalSeconds);
  }

  /**
   * How many readings past {@link capacity} are kept before the oldest are
   * dropped: dropping `slack` at a time makes the cost of a drop, spread over
   * the readings that caused it, a constant.
   */
  get slack(): number {
    return Math.max(16, Math.ceil(this.capacity / 32));
  }

  /**
   * The time of the newest reading; null when there is none.
   */
  get lastTimestamp(): number | null {
    const count = this._timestamps.length;
    return count === 0 ? null : this._timestamps[count - 1];
  }

  /**
   * Add the readings of a `GET gpus/history?since=` answer that are newer
   * than the newest kept, with a gap (a reading of nulls) wherever readings
   * are too far apart.
   *
   * @returns whether any reading was added
   */
  append(delta: IGpuHistory): boolean {
    this._historySeconds = delta.history_seconds;
    this._intervalSeconds = delta.interval_seconds;
    const given = new Map<IGpuColumns, IGpuSeries>(
      delta.gpus.map(series => [this._column(series), series])
    );
    let added = false;
    delta.timestamps.forEach((timestamp, position) => {
      const last = this.lastTimestamp;
      if (last !== null && timestamp <= last) {
        return;
      }
      // After or for a client that asks seldom, a reading comes that much
      // later: the panel opening finds the last such reading seconds old.
      const spacing = delta.spacing_seconds[position] ?? this._intervalSeconds;
      const expected = Math.max(spacing, this._lastSpacing);
      if (last !== null && timestamp - last > GAP_INTERVALS * expected) {
        this._pushGap(last + this._intervalSeconds);
      }
      this._lastSpacing = spacing;
      this._timestamps.push(timestamp);
      for (const gpu of this._gpus) {
        const series = given.get(gpu);
        for (const field of SERIES_FIELDS) {
          gpu.values[field].push(series?.[field][position] ?? null);
        }
      }
      for (const field of MACHINE_FIELDS) {
        this._machine[field].push(delta.machine?.[field][position] ?? null);
      }
      added = true;
    });
    if (added) {
      this._dropOldest();
      this._revision++;
    }
    return added;
  }

  /**
   * The column of a GPU, created (null where it had no readings) if new.
   */
  private _column(series: IGpuSeries): Private.IColumns {
    const existing = this._gpus.find(gpu => sameGpu(gpu, series));
    if (existing) {
      return existing;
    }
    const count = this._timestamps.length;
    const values = Private.gpuValues(() =>
      new Array<number | null>(count).fill(null)
    );
    const column: Private.IColumns = {
      index: series.index,
      uuid: series.uuid,
      name: series.name,
      values
    };
    this._gpus.push(column);
    this._gpus.sort((a, b) => a.index - b.index);
    return column;
  }

  /**
   * Add a reading with no values, which uPlot draws as a break in each line.
   */
  private _pushGap(timestamp: number): void {
    this._timestamps.push(timestamp);
    for (const gpu of this._gpus) {
      for (const field of SERIES_FIELDS) {
        gpu.values[field].push(null);
      }
    }
    for (const field of MACHINE_FIELDS) {
      this._machine[field].push(null);
    }
  }

  /**
   * Drop the oldest readings once `slack` readings past capacity are held.
   */
  private _dropOldest(): void {
    const excess = this._timestamps.length - this.capacity;
    if (excess <= this.slack) {
      return;
    }
    this._timestamps.splice(0, excess);
    for (const gpu of this._gpus) {
      for (const field of SERIES_FIELDS) {
        gpu.values[field].splice(0, excess);
      }
    }
    for (const field of MACHINE_FIELDS) {
      this._machine[field].splice(0, excess);
    }
  }

  private _historySeconds: number;
  private _intervalSeconds: number;
  // How far apart the server was reading when it made the newest reading.
  private _lastSpacing = 0;
  private _revision = 0;
  private _timestamps: number[] = [];
  private _gpus: Private.IColumns[] = [];
  private _machine: IMachineSeries = machineColumns();
}

/**
 * The types of {@link GpuHistoryBuffer}.
 */
export namespace GpuHistoryBuffer {
  /**
   * How much history to keep until the server says.
   */
  export interface IOptions {
    /**
     * The span kept, in seconds.
     */
    historySeconds?: number;
    /**
     * The time between two readings, in seconds.
     */
    intervalSeconds?: number;
  }
}

/**
 * File-local types.
 */
namespace Private {
  /**
   * The columns of one GPU, writable.
   */
  export interface IColumns extends IGpuColumns {
    readonly values: { [F in GpuSeriesField]: (number | null)[] };
  }

  /**
   * A GPU's columns, each made by `column`.
   */
  export function gpuValues(
    column: (field: GpuSeriesField) => (number | null)[]
  ): IColumns['values'] {
    const values = {} as IColumns['values'];
    for (const field of SERIES_FIELDS) {
      values[field] = column(field);
    }
    return values;
  }
}
