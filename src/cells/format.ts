import { TranslationBundle } from '@jupyterlab/translation';

import { ITimeBand } from '../charts/charts';
import {
  formatDuration,
  formatList,
  formatMemory,
  formatPercent
} from '../format/units';
import { ICellRun } from '../tokens';
import { ISpanFigures, ISpanGpuFigures } from '../restapi/kernels';
import {
  HELD_MEMORY_MIB,
  KERNEL_CPU_BUSY_PERCENT,
  KERNEL_CPU_IDLE_PERCENT
} from '../restapi/rules';

/**
 * The fewest server reads of a run before its low utilisation says
 * something: a few seconds of a cell that loads a model are no data-loading
 * bottleneck.
 */
export const LOW_UTILIZATION_MIN_SAMPLES = 5;

/**
 * The least memory a run must add on a GPU for the memory to be its own, in
 * MiB: below it, what a kernel's CUDA libraries take by themselves (cuBLAS
 * workspaces are tens of MiB).
 */
export const ADDED_MEMORY_MIB = 64;

/**
 * The memory a run added on a GPU: its peak less what the kernel held as
 * the run started, in MiB.
 */
export function addedMemoryMiB(gpu: ISpanGpuFigures): number {
  return Math.max(0, gpu.peak_memory_mib - gpu.start_memory_mib);
}

/**
 * The GPUs a run used: those it added memory on, or that ran work while it
 * ran. A cell that only prints, plots or reads files while a model sits on
 * the GPU holds that memory but did not use the GPU.
 *
 * The utilisation is the whole GPU's: another process's work on the same
 * GPU counts too.
 */
export function usedGpus(figures: ISpanFigures): ISpanGpuFigures[] {
  return figures.gpus.filter(
    gpu =>
      addedMemoryMiB(gpu) >= ADDED_MEMORY_MIB || (gpu.peak_utilization ?? 0) > 0
  );
}

/**
 * The line under a cell for a run, per GPU it used: "GPU 0 · peak 14.2 GiB
 * (+2.1 GiB) · 87 % avg · 3 min 12 s", the peak beside what the run added
 * to what the kernel held; "held 14.2 GiB" where it added nothing. With two
 * GPUs "GPU 0: peak 21.9 GiB (+21.9 GiB), 87 % avg · GPU 1: held 16.8 GiB,
 * 3 % avg · 7.0 s" (memory is not added up across cards, nor utilisation
 * averaged over them).
 *
 * @param showShort - whether a run too short to measure says so ("GPU ·
 *   too short to measure (0.4 s)"); by default it gets no line, as a quick
 *   cell has nothing to tell
 * @returns null when there is nothing to say: no figures yet, the run used
 *   no GPU, or a short run not shown
 */
export function cellLineText(
  run: ICellRun,
  showShort: boolean,
  trans: TranslationBundle
): string | null {
  const figures = run.figures;
  if (figures === null) {
    return null;
  }
  const duration = formatDuration(run.end - run.start, trans);
  if (figures.too_short || figures.samples < 2) {
    return showShort
      ? trans.__('GPU · too short to measure (%1)', duration)
      : null;
  }
  const used = usedGpus(figures);
  if (used.length === 0) {
    return null;
  }
  const parts =
    used.length === 1
      ? [trans.__('GPU %1', used[0].index), ...gpuFigures(used[0], trans)]
      : used.map(gpu =>
          trans.__(
            'GPU %1: %2',
            gpu.index,
            formatList(gpuFigures(gpu, trans), trans)
          )
        );
  parts.push(duration);
  if (figures.gap) {
    parts.push(trans.__('readings missing for part of it'));
  }
  return parts.join(' · ');
}

/**
 * What a run did on one GPU: "peak 21.9 GiB (+4.2 GiB)" or "held 21.9 GiB",
 * then "87 % avg".
 */
function gpuFigures(gpu: ISpanGpuFigures, trans: TranslationBundle): string[] {
  const added = addedMemoryMiB(gpu);
  const parts = [
    added >= ADDED_MEMORY_MIB
      ? trans.__(
          'peak %1 (+%2)',
          formatMemory(gpu.peak_memory_mib, trans),
          formatMemory(added, trans)
        )
      : trans.__('held %1', formatMemory(gpu.peak_memory_mib, trans))
  ];
  if (gpu.mean_utilization !== null) {
    parts.push(trans.__('%1 avg', formatPercent(gpu.mean_utilization, trans)));
  }
  return parts;
}

/**
 * The figures of a run per GPU it held memory on, one line each: "GPU 0
 * (NVIDIA RTX A5000): 17.7 GiB at the start, peak 21.9 GiB, 87 % avg, 99 %
 * max"; then the kernel's CPU: "Kernel CPU: 250 % avg (100 % is one core)".
 */
export function cellLineDetails(
  figures: ISpanFigures | null,
  trans: TranslationBundle
): string {
  const lines = (figures?.gpus ?? []).map(gpu => {
    const parts = [
      trans.__('%1 at the start', formatMemory(gpu.start_memory_mib, trans)),
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
  });
  const cpu = figures?.mean_cpu_percent ?? null;
  if (cpu !== null) {
    lines.push(
      trans.__(
        'Kernel CPU: %1 avg (100 % is one core)',
        formatPercent(cpu, trans)
      )
    );
  }
  return lines.join('\n');
}

/**
 * Whether a run used GPUs it held memory on while they were mostly idle,
 * for long enough to matter: the data-loading bottleneck, a GPU waiting on
 * the CPU. Each such GPU must have stayed low: one busy GPU beside an idle
 * one is no data-loading problem; a cell that did not use the GPU (a plot
 * beside a loaded model, or the loading of the model itself) is none
 * either.
 *
 * @param thresholdPercent - mean utilisation below this is low
 */
export function lowUtilization(
  figures: ISpanFigures | null,
  thresholdPercent: number
): figures is ISpanFigures {
  if (
    figures === null ||
    figures.too_short ||
    figures.samples < LOW_UTILIZATION_MIN_SAMPLES
  ) {
    return false;
  }
  const used = usedGpus(figures).filter(
    gpu => gpu.peak_memory_mib >= HELD_MEMORY_MIB
  );
  return (
    used.length > 0 &&
    used.every(
      gpu =>
        gpu.mean_utilization !== null && gpu.mean_utilization < thresholdPercent
    ) &&
    // Waiting needs work in between: a cell that only loaded a model (its
    // memory rose, the GPU computed nothing) starved of nothing.
    used.some(gpu => (gpu.peak_utilization ?? 0) >= GPU_WORKED_PERCENT)
  );
}

/**
 * A read in which the GPU computed at least this part of the time, in
 * percent, is work: copying a model onto it reads 0 %, torch's first
 * kernels a few percent.
 */
const GPU_WORKED_PERCENT = 10;

/**
 * The hint of a run with low utilisation: why, as the kernel's CPU tells it
 * (busy preparing data, or idle too: waiting on something else), and what
 * to try.
 */
export function lowUtilizationHint(
  figures: ISpanFigures,
  thresholdPercent: number,
  trans: TranslationBundle
): string {
  const cpu = figures.mean_cpu_percent;
  if (cpu !== null && cpu >= KERNEL_CPU_BUSY_PERCENT) {
    return trans.__(
      "GPU under %1 % while the kernel's CPU was busy (%2 of a core): preparing data holds it back; try DataLoader num_workers, pin_memory, prefetching.",
      thresholdPercent,
      formatPercent(cpu, trans)
    );
  }
  if (cpu !== null && cpu < KERNEL_CPU_IDLE_PERCENT) {
    return trans.__(
      "GPU under %1 % while the kernel's CPU idled too (%2): the cell waited on something else, such as files, the network or another process.",
      thresholdPercent,
      formatPercent(cpu, trans)
    );
  }
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
