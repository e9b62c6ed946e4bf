import { TranslationBundle } from '@jupyterlab/translation';

import { ITimeBand } from '../gpu/charts';
import {
  formatDuration,
  formatList,
  formatMemory,
  formatPercent
} from '../gpu/units';
import { ICellRun } from '../tokens';
import { ISpanFigures } from '../restapi/kernels';
import { HELD_MEMORY_MIB } from '../restapi/rules';

/**
 * The fewest server reads of a run before its low utilisation says
 * something: a few seconds of a cell that loads a model are no data-loading
 * bottleneck.
 */
export const LOW_UTILIZATION_MIN_SAMPLES = 5;

/**
 * The line under a cell for a run: "GPU 0 · peak 14.2 GiB · 87 % avg ·
 * 3 min 12 s", or "GPU · too short to measure (0.4 s)".
 *
 * @param usesGpu - whether the kernel uses a GPU: a run too short to
 *   measure says so only then, so that a CPU notebook gets no line
 * @returns null when there is nothing to say: no figures yet, or the
 *   kernel held no GPU memory during the run
 */
export function cellLineText(
  run: ICellRun,
  usesGpu: boolean,
  trans: TranslationBundle
): string | null {
  const figures = run.figures;
  if (figures === null) {
    return null;
  }
  const duration = formatDuration(run.end - run.start, trans);
  if (figures.too_short) {
    return usesGpu
      ? trans.__('GPU · too short to measure (%1)', duration)
      : null;
  }
  if (figures.gpus.length === 0 || figures.peak_memory_mib === null) {
    return null;
  }
  const parts = [
    trans.__(
      'GPU %1',
      formatList(
        figures.gpus.map(gpu => String(gpu.index)),
        trans
      )
    ),
    trans.__('peak %1', formatMemory(figures.peak_memory_mib, trans))
  ];
  if (figures.mean_utilization !== null) {
    parts.push(
      trans.__('%1 avg', formatPercent(figures.mean_utilization, trans))
    );
  }
  parts.push(duration);
  if (figures.gap) {
    parts.push(trans.__('readings missing for part of it'));
  }
  return parts.join(' · ');
}

/**
 * The figures of a run per GPU, one line each: "GPU 0 (NVIDIA RTX A5000):
 * peak 21.9 GiB, 87 % avg, 99 % max".
 */
export function cellLineDetails(
  figures: ISpanFigures | null,
  trans: TranslationBundle
): string {
  return (figures?.gpus ?? [])
    .map(gpu => {
      const parts = [
        trans.__('peak %1', formatMemory(gpu.peak_memory_mib, trans))
      ];
      if (gpu.mean_utilization !== null) {
        parts.push(
          trans.__('%1 avg', formatPercent(gpu.mean_utilization, trans))
        );
      }
      if (gpu.peak_utilization !== null) {
        parts.push(
          trans.__('%1 max', formatPercent(gpu.peak_utilization, trans))
        );
      }
      const name = gpu.name
        ? trans.__('GPU %1 (%2)', gpu.index, gpu.name)
        : trans.__('GPU %1', gpu.index);
      return trans.__('%1: %2', name, formatList(parts, trans));
    })
    .join('\n');
}

/**
 * Whether a run held GPU memory while its GPUs were mostly idle, for long
 * enough to matter: the data-loading bottleneck, a GPU waiting on the CPU.
 *
 * @param thresholdPercent - mean utilisation below this is low
 */
export function lowUtilization(
  figures: ISpanFigures | null,
  thresholdPercent: number
): boolean {
  return (
    figures !== null &&
    !figures.too_short &&
    figures.samples >= LOW_UTILIZATION_MIN_SAMPLES &&
    (figures.peak_memory_mib ?? 0) >= HELD_MEMORY_MIB &&
    figures.mean_utilization !== null &&
    figures.mean_utilization < thresholdPercent
  );
}

/**
 * The hint of a run with low utilisation, and what to try.
 */
export function lowUtilizationHint(
  thresholdPercent: number,
  trans: TranslationBundle
): string {
  return trans.__(
    'GPU under %1 % while this cell held memory: try DataLoader num_workers, pin_memory, prefetching.',
    thresholdPercent
  );
}

/**
 * The bands the charts shade for a notebook's runs, named
 * "[5] model.fit(train, epochs=3)" (the line cut at 60 characters).
 */
export function runBands(runs: readonly ICellRun[]): ITimeBand[] {
  return runs.map(run => {
    const line =
      run.firstLine.length > 60
        ? `${run.firstLine.slice(0, 59)}…`
        : run.firstLine;
    return {
      key: run.cellId,
      start: run.start,
      end: run.end,
      label: `[${run.executionCount ?? ' '}] ${line}`
    };
  });
}
