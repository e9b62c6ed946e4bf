import { ICellRun, INotebookGpuNeed } from '../tokens';

/**
 * What a cell keeps of its last measured run in its metadata
 * (`gpu_monitor.last_run`), so that a notebook carries its GPU footprint
 * to the next person. The keys are a file format: snake_case, and never
 * renamed.
 */
export interface ILastRunRecord {
  /**
   * The most memory the kernel held at once on all GPUs, in MiB.
   */
  peak_memory_mib: number;
  /**
   * The mean utilisation of the GPUs it held memory on, in percent; null
   * when they do not report it (MIG).
   */
  mean_utilization: number | null;
  /**
   * How long the run took, in seconds.
   */
  duration_seconds: number;
  /**
   * The GPU it held the most memory on; null when the driver gave no name.
   */
  gpu_name: string | null;
  /**
   * How many GPUs it held memory on.
   */
  gpu_count: number;
  /**
   * The most memory it held on each of them, in MiB, in the order of their
   * indices; absent from records written before it was kept.
   */
  peak_memory_mib_per_gpu?: number[];
  /**
   * When the run ended, as an ISO 8601 date in UTC.
   */
  date: string;
}

/**
 * The record a run leaves in its cell; null when the run has nothing worth
 * keeping: no figures yet, too short to measure, or no GPU memory held.
 */
export function lastRunRecord(run: ICellRun): ILastRunRecord | null {
  const figures = run.figures;
  if (
    figures === null ||
    figures.too_short ||
    figures.peak_memory_mib === null ||
    figures.gpus.length === 0
  ) {
    return null;
  }
  const largest = figures.gpus.reduce((a, b) =>
    b.peak_memory_mib > a.peak_memory_mib ? b : a
  );
  return {
    peak_memory_mib: Math.round(figures.peak_memory_mib),
    mean_utilization:
      figures.mean_utilization === null
        ? null
        : Math.round(figures.mean_utilization * 10) / 10,
    duration_seconds: Math.round(figures.duration_seconds * 10) / 10,
    gpu_name: largest.name,
    gpu_count: figures.gpus.length,
    peak_memory_mib_per_gpu: [...figures.gpus]
      .sort((a, b) => a.index - b.index)
      .map(gpu => Math.round(gpu.peak_memory_mib)),
    date: new Date(run.end * 1000).toISOString()
  };
}

/**
 * The record in a cell's `gpu_monitor` metadata, if it is one: a notebook
 * is a file anyone may have edited, so each field is checked.
 */
export function readLastRun(metadata: unknown): ILastRunRecord | null {
  const record = Private.field(metadata, 'last_run');
  const peak = Private.field(record, 'peak_memory_mib');
  const count = Private.field(record, 'gpu_count') ?? 1;
  const duration = Private.field(record, 'duration_seconds');
  const utilization = Private.field(record, 'mean_utilization') ?? null;
  const name = Private.field(record, 'gpu_name') ?? null;
  const date = Private.field(record, 'date');
  const perGpu = Private.field(record, 'peak_memory_mib_per_gpu');
  if (
    !Private.isCount(peak, 0) ||
    !Private.isCount(count, 1) ||
    !Number.isInteger(count) ||
    typeof duration !== 'number' ||
    !(utilization === null || typeof utilization === 'number') ||
    !(name === null || typeof name === 'string') ||
    typeof date !== 'string'
  ) {
    return null;
  }
  // Kept only when it is one count per GPU: an edited file may say anything.
  const perGpuValid =
    Array.isArray(perGpu) &&
    perGpu.length === count &&
    perGpu.every(value => Private.isCount(value, 0));
  return {
    peak_memory_mib: peak,
    mean_utilization: utilization,
    duration_seconds: duration,
    gpu_name: name,
    gpu_count: count,
    ...(perGpuValid ? { peak_memory_mib_per_gpu: perGpu } : {}),
    date
  };
}

/**
 * What a notebook needs of a GPU: the record of its cells that needed the
 * most memory on one GPU (on more GPUs among equals), each GPU's peak as
 * it was. Null when no cell has a record.
 */
export function notebookNeed(
  records: Iterable<ILastRunRecord>
): INotebookGpuNeed | null {
  let largest: { record: ILastRunRecord; perGpu: number[] } | null = null;
  for (const record of records) {
    const perGpu = Private.perGpu(record);
    const most = Math.max(...perGpu);
    const before = largest === null ? -1 : Math.max(...largest.perGpu);
    if (
      largest === null ||
      most > before ||
      (most === before && record.gpu_count > largest.record.gpu_count)
    ) {
      largest = { record, perGpu };
    }
  }
  return largest === null
    ? null
    : {
        peakMemoryMiB: largest.record.peak_memory_mib,
        gpuCount: largest.record.gpu_count,
        perGpuMiB: largest.perGpu,
        gpuName: largest.record.gpu_name,
        date: largest.record.date
      };
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Each GPU's peak of a record: as kept, or its total split evenly (a
   * record that predates them).
   */
  export function perGpu(record: ILastRunRecord): number[] {
    return (
      record.peak_memory_mib_per_gpu ??
      new Array<number>(record.gpu_count).fill(
        record.peak_memory_mib / record.gpu_count
      )
    );
  }

  /**
   * A field of something that may be an object.
   */
  export function field(value: unknown, key: string): any {
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)[key]
      : undefined;
  }

  /**
   * Whether a value is a finite number no less than `least`.
   */
  export function isCount(value: unknown, least: number): value is number {
    return (
      typeof value === 'number' && Number.isFinite(value) && value >= least
    );
  }
}
