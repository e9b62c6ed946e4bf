import { TranslationBundle } from '@jupyterlab/translation';

import { IGpuTimeSeries, INotebookGpuNeed } from '../tokens';
import { IGpu, IGpuSnapshot } from '../restapi/gpus';
import { indexAt, sameGpu } from '../gpu/history';
import { kernelHoldings } from '../gpu/processes';
import { formatList, formatMemory, formatPercent } from '../format/units';

/**
 * How far back the "least used GPU" looks, in seconds: long enough that a
 * GPU between two epochs of someone's training does not look free.
 */
export const FREE_GPU_WINDOW_SECONDS = 300;

/**
 * How busy a GPU has been lately.
 */
export interface IGpuLoad {
  /**
   * The GPU index.
   */
  index: number;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * The memory free now, in MiB.
   */
  freeMiB: number;
  /**
   * The card's memory, in MiB.
   */
  totalMiB: number;
  /**
   * What the notebook's own kernel holds on it, in MiB: room it gets back
   * by the restart that pointing it at another GPU needs anyway.
   */
  ownMiB: number;
  /**
   * The mean share of the memory in use over the window, from 0 to 1.
   */
  memoryShare: number;
  /**
   * The mean utilisation over the window, in percent; null when not read
   * (the current reading when the history has none).
   */
  utilizationPercent: number | null;
  /**
   * The seconds of readings the means are over, at most the window's; 0
   * when they are the current reading alone.
   */
  measuredSeconds: number;
}

/**
 * Whether a notebook can be pointed at a GPU with `CUDA_VISIBLE_DEVICES`
 * and its index: read without error, its memory known, and not split into
 * MIG instances (those are chosen by their own UUIDs).
 */
export function selectable(gpu: IGpu): boolean {
  return (
    gpu.error === null &&
    gpu.mig_mode !== 'enabled' &&
    gpu.memory_total_mib !== null &&
    gpu.memory_used_mib !== null
  );
}

/**
 * The memory free on a GPU now, in MiB: the driver's figure, or the total
 * less what is in use when it gives none.
 */
export function freeMemory(gpu: IGpu): number {
  return (
    gpu.memory_free_mib ??
    Math.max(0, (gpu.memory_total_mib ?? 0) - (gpu.memory_used_mib ?? 0))
  );
}

/**
 * How busy each selectable GPU of the snapshot has been over the
 * `windowSeconds` before it, with what the notebook's kernel holds on it (its current reading where the history has
 * none: the history is only polled while the panel shows it, so it may
 * have stopped long before).
 */
export function gpuLoads(
  snapshot: IGpuSnapshot,
  history: IGpuTimeSeries | null,
  kernelId: string | null = null,
  windowSeconds = FREE_GPU_WINDOW_SECONDS
): IGpuLoad[] {
  const own = kernelId ? kernelHoldings(snapshot.gpus, kernelId) : new Map();
  const timestamps = history?.timestamps ?? [];
  const from = indexAt(timestamps, snapshot.timestamp - windowSeconds);
  const span =
    from < timestamps.length
      ? timestamps[timestamps.length - 1] - timestamps[from]
      : 0;
  return snapshot.gpus.filter(selectable).map(gpu => {
    const total = gpu.memory_total_mib!;
    const column = history?.gpus.find(series => sameGpu(series, gpu));
    const meanUsed = Private.mean(column?.values.memory_used_mib, from);
    const used = meanUsed ?? gpu.memory_used_mib!;
    return {
      index: gpu.index,
      name: gpu.name,
      freeMiB: freeMemory(gpu),
      totalMiB: total,
      ownMiB: own.get(gpu.index) ?? 0,
      memoryShare: total > 0 ? used / total : 1,
      utilizationPercent:
        Private.mean(column?.values.utilization_gpu, from) ??
        gpu.utilization_gpu,
      measuredSeconds: meanUsed === null ? 0 : span
    };
  });
}

/**
 * The room a GPU must have free to be proposed: what the notebook's cells
 * recorded they needed on each GPU when they did, else a share of the card
 * (the panel's setting).
 */
export interface IRoomNeeded {
  /**
   * The notebook's recorded need; null when it has none.
   */
  need: INotebookGpuNeed | null;
  /**
   * The share of a card's memory that must be free without a recorded
   * need, from 0 to 1.
   */
  minFreeShare: number;
}

/**
 * The most a notebook needs on one GPU, in MiB: what a GPU proposed for it
 * alone must have.
 */
export function largestGpuNeed(need: INotebookGpuNeed): number {
  return Math.max(...need.perGpuMiB);
}

/**
 * The memory, in MiB, a GPU must have free to be proposed.
 */
export function roomNeeded(gpu: IGpuLoad, room: IRoomNeeded): number {
  // One GPU is proposed: it must hold what the notebook's largest GPU held.
  return room.need
    ? largestGpuNeed(room.need)
    : room.minFreeShare * gpu.totalMiB;
}

/**
 * The least used of the GPUs that have the room needed: the lowest sum of
 * its mean share of memory in use and its mean utilisation; among equals
 * the one with the most memory free. Null when none has the room: a busy
 * card with a few hundred MiB left is no candidate, however idle.
 */
export function leastUsed(
  loads: readonly IGpuLoad[],
  room: IRoomNeeded
): IGpuLoad | null {
  const load = (gpu: IGpuLoad): number =>
    gpu.memoryShare + (gpu.utilizationPercent ?? 0) / 100;
  const sorted = loads
    .filter(gpu => gpu.freeMiB + gpu.ownMiB >= roomNeeded(gpu, room))
    .sort((a, b) => load(a) - load(b) || b.freeMiB - a.freeMiB);
  return sorted[0] ?? null;
}

/**
 * Why no GPU is proposed, with the one that has the most memory free:
 * "No GPU has 20 % of its memory free; the most free: GPU 3, 411 MiB."
 */
export function noRoomText(
  loads: readonly IGpuLoad[],
  room: IRoomNeeded,
  trans: TranslationBundle
): string {
  const roomiest = [...loads].sort((a, b) => b.freeMiB - a.freeMiB)[0];
  const most = roomiest
    ? trans.__(
        'the most free: GPU %1, %2',
        roomiest.index,
        formatMemory(roomiest.freeMiB, trans)
      )
    : '';
  return room.need
    ? trans.__(
        'No GPU has the %1 this notebook needed free; %2.',
        formatMemory(largestGpuNeed(room.need), trans),
        most
      )
    : trans.__(
        'No GPU has %1 of its memory free; %2.',
        formatPercent(room.minFreeShare * 100, trans),
        most
      );
}

/**
 * The source of a first cell that points the kernel at the given GPUs, by
 * nvidia-smi's indices: `CUDA_DEVICE_ORDER` makes CUDA number the GPUs the
 * way nvidia-smi does (CUDA puts the fastest first by default).
 */
export function cudaVisibleDevicesSource(
  gpuIndices: readonly number[],
  trans: TranslationBundle
): string {
  return [
    `# ${trans.__('Run this cell before torch (or any CUDA library) initialises CUDA.')}`,
    `# ${trans.__('If the kernel has already used the GPU, restart it first.')}`,
    'import os',
    '',
    'os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"',
    `os.environ["CUDA_VISIBLE_DEVICES"] = "${gpuIndices.join(',')}"`
  ].join('\n');
}

/**
 * Whether a cell's source is, unchanged, one that
 * {@link cudaVisibleDevicesSource} wrote: a second use of the command
 * replaces it rather than stacking another, and never touches a cell the
 * user wrote.
 */
export function isCudaVisibleDevicesCell(
  source: string,
  trans: TranslationBundle
): boolean {
  const match = /^os\.environ\["CUDA_VISIBLE_DEVICES"\] = "([\d,]+)"$/m.exec(
    source
  );
  return (
    match !== null &&
    source === cudaVisibleDevicesSource(match[1].split(',').map(Number), trans)
  );
}

/**
 * The name of the action that points a notebook at GPUs: "Use GPU 1",
 * "Use GPUs 1, 3".
 */
export function useGpusLabel(
  gpuIndices: readonly number[],
  trans: TranslationBundle
): string {
  return trans._n(
    'Use GPU %2',
    'Use GPUs %2',
    gpuIndices.length,
    formatList(gpuIndices.map(String), trans)
  );
}

/**
 * What the action that points a notebook at GPUs does.
 */
export function useGpusCaption(trans: TranslationBundle): string {
  return trans.__(
    'Insert a first cell that sets CUDA_VISIBLE_DEVICES; it must run before torch initialises CUDA'
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The mean of the values read from `from` on; null when none was read.
   */
  export function mean(
    values: readonly (number | null)[] | undefined,
    from: number
  ): number | null {
    let sum = 0;
    let count = 0;
    for (let i = from; i < (values?.length ?? 0); i++) {
      const value = values![i];
      if (value !== null) {
        sum += value;
        count++;
      }
    }
    return count === 0 ? null : sum / count;
  }
}
