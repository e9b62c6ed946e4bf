import { TranslationBundle } from '@jupyterlab/translation';

import { IGpu, IGpuSnapshot } from '../restapi/gpus';
import { isNearlyFull, NEARLY_FULL_PERCENT } from './fullness';
import {
  formatList,
  formatPercent,
  formatSentences,
  gib
} from '../format/units';

/**
 * What the status bar item sums up: the busiest GPU, or all GPUs together.
 */
export type SummaryMode = 'busiest' | 'sum';

/**
 * The figures of the status bar item.
 */
export interface IGpuSummary {
  /**
   * The GPU summed up; null when it is all of several.
   */
  gpuIndex: number | null;
  /**
   * How many GPUs the summary is about: the server's, or those the current
   * notebook's kernel uses.
   */
  gpuCount: number;
  /**
   * Whether the summary is about the GPUs the current notebook's kernel
   * holds memory on, rather than all of the server's.
   */
  kernel: boolean;
  /**
   * Utilisation in percent: the GPU's, or the mean of all GPUs; null when
   * no GPU reports it (e.g. under MIG).
   */
  utilizationPercent: number | null;
  /**
   * Whether the GPUs summed up are split into MIG instances, which have no
   * utilisation counter (not a failure to read one).
   */
  migMode: boolean;
  /**
   * Memory in use, in MiB.
   */
  memoryUsedMiB: number;
  /**
   * Total memory, in MiB.
   */
  memoryTotalMiB: number;
  /**
   * The indices of the GPUs it is about (those counted) whose memory is
   * nearly full, which the item marks whichever GPU its figures show.
   */
  nearlyFull: number[];
}

/**
 * Sum up a snapshot for the status bar; null when it has no GPU.
 *
 * Where the current notebook's kernel holds memory on GPUs, the summary is
 * about those: the one it uses, or the busiest of them. Otherwise it is
 * about the busiest GPU of the server, or all of them (`mode`).
 *
 * The busiest GPU is the one with the highest utilisation, and among equals
 * the one with the largest share of its memory in use.
 *
 * @param kernelId - the current notebook's kernel; null when there is none
 */
export function summarize(
  snapshot: IGpuSnapshot,
  mode: SummaryMode,
  kernelId: string | null = null
): IGpuSummary | null {
  const gpus = snapshot.gpus;
  if (gpus.length === 0) {
    return null;
  }
  const used =
    kernelId === null
      ? []
      : gpus.filter(gpu =>
          gpu.processes.some(process => process.kernel_id === kernelId)
        );
  if (used.length > 0) {
    return {
      ...Private.busiest(used),
      kernel: true,
      nearlyFull: Private.nearlyFull(used)
    };
  }
  const nearlyFull = Private.nearlyFull(gpus);
  if (mode === 'busiest') {
    return { ...Private.busiest(gpus), kernel: false, nearlyFull };
  }
  const utilizations = gpus
    .map(gpu => gpu.utilization_gpu)
    .filter((value): value is number => value !== null);
  return {
    // One GPU is that GPU, by its own index (a DCGM exporter's may be 3).
    gpuIndex: gpus.length === 1 ? gpus[0].index : null,
    gpuCount: gpus.length,
    kernel: false,
    nearlyFull,
    utilizationPercent:
      utilizations.length === 0
        ? null
        : utilizations.reduce((sum, value) => sum + value, 0) /
          utilizations.length,
    migMode: gpus.every(gpu => gpu.mig_mode === 'enabled'),
    memoryUsedMiB: gpus.reduce(
      (sum, gpu) => sum + (gpu.memory_used_mib ?? 0),
      0
    ),
    memoryTotalMiB: gpus.reduce(
      (sum, gpu) => sum + (gpu.memory_total_mib ?? 0),
      0
    )
  };
}

/**
 * The compact text of the status bar item, which says which GPU or how
 * many: "GPU 0 · 37 % · 12.3/80.0 GiB" for the only GPU, "2 GPUs · max 91 %
 * · 21.9/24.0 GiB" for the busiest of several, "2 GPUs · mean 19 % · …" for
 * all of them; "MIG" where MIG instances have no utilisation, "n/a" where
 * it was not read.
 */
export function summaryText(
  summary: IGpuSummary,
  trans: TranslationBundle
): string {
  const memory = trans.__(
    '%1/%2 GiB',
    gib(summary.memoryUsedMiB),
    gib(summary.memoryTotalMiB)
  );
  const percent = summary.utilizationPercent;
  const utilization =
    percent !== null
      ? formatPercent(percent, trans)
      : summary.migMode
        ? trans.__('MIG')
        : trans.__('n/a');
  if (summary.gpuCount === 1) {
    return trans.__(
      'GPU %1 · %2 · %3',
      summary.gpuIndex ?? 0,
      utilization,
      memory
    );
  }
  const gpus = trans._n('%1 GPU', '%1 GPUs', summary.gpuCount);
  const which =
    percent === null
      ? utilization
      : summary.gpuIndex === null
        ? trans.__('mean %1', utilization)
        : trans.__('max %1', utilization);
  return trans.__('%1 · %2 · %3', gpus, which, memory);
}

/**
 * The tooltip of the status bar item: which GPU the text is about.
 */
export function summaryTitle(
  summary: IGpuSummary,
  trans: TranslationBundle
): string {
  const click = trans.__('Click to open the GPU Monitor.');
  const full =
    summary.nearlyFull.length === 0
      ? null
      : trans._n(
          'GPU %2 is nearly out of memory (%3 % or more in use).',
          'GPUs %2 are nearly out of memory (%3 % or more in use).',
          summary.nearlyFull.length,
          formatList(summary.nearlyFull.map(String), trans),
          NEARLY_FULL_PERCENT
        );
  const titled = (what: string) =>
    full === null
      ? formatSentences(what, click, trans)
      : formatSentences(full, formatSentences(what, click, trans), trans);
  if (summary.kernel) {
    const what =
      summary.gpuCount === 1
        ? trans.__(
            "GPU %1, which this notebook's kernel uses: utilization and memory in use.",
            summary.gpuIndex
          )
        : trans.__(
            "GPU %1, the busiest of the %2 GPUs this notebook's kernel uses: utilization and memory in use.",
            summary.gpuIndex,
            summary.gpuCount
          );
    return titled(what);
  }
  if (summary.gpuCount === 1) {
    return titled(trans.__('GPU utilization and memory in use.'));
  }
  const what =
    summary.gpuIndex === null
      ? trans.__(
          'Mean utilization and total memory in use of all %1 GPUs.',
          summary.gpuCount
        )
      : trans.__(
          'GPU %1, the busiest of %2: utilization and memory in use.',
          summary.gpuIndex,
          summary.gpuCount
        );
  return titled(what);
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The indices of those of `gpus` whose memory is nearly full.
   */
  export function nearlyFull(gpus: IGpu[]): number[] {
    return gpus
      .filter(gpu => isNearlyFull(gpu.memory_used_mib, gpu.memory_total_mib))
      .map(gpu => gpu.index);
  }

  /**
   * The figures of the busiest of `gpus`, and how many there are.
   */
  export function busiest(
    gpus: IGpu[]
  ): Omit<IGpuSummary, 'kernel' | 'nearlyFull'> {
    const gpu = gpus.reduce((best, candidate) =>
      compareLoad(candidate, best) > 0 ? candidate : best
    );
    return {
      gpuIndex: gpu.index,
      gpuCount: gpus.length,
      utilizationPercent: gpu.utilization_gpu,
      migMode: gpu.mig_mode === 'enabled',
      memoryUsedMiB: gpu.memory_used_mib ?? 0,
      memoryTotalMiB: gpu.memory_total_mib ?? 0
    };
  }

  /**
   * Positive when `a` is busier than `b`.
   */
  export function compareLoad(a: IGpu, b: IGpu): number {
    const byUtilization = (a.utilization_gpu ?? -1) - (b.utilization_gpu ?? -1);
    return byUtilization !== 0
      ? byUtilization
      : memoryShare(a) - memoryShare(b);
  }

  /**
   * The share of a GPU's memory in use, from 0 to 1.
   */
  function memoryShare(gpu: IGpu): number {
    return gpu.memory_total_mib
      ? (gpu.memory_used_mib ?? 0) / gpu.memory_total_mib
      : 0;
  }
}
