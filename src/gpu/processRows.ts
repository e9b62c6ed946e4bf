import { TranslationBundle } from '@jupyterlab/translation';

import { IGpuProcess } from '../restapi/gpus';
import { kernelLabel, processOwner } from './processes';

/**
 * A process on one of the GPUs, as the panel's process list has it.
 */
export interface IGpuProcessEntry {
  /**
   * The index of the GPU it runs on.
   */
  gpuIndex: number;
  /**
   * The process as the snapshot has it.
   */
  process: IGpuProcess;
}

/**
 * The processes of the GPUs in the order the list shows them: this server's
 * own kernels first, then the user's other processes, then other users',
 * then those not visible from here; the most memory first within each, and
 * the GPUs' order where they hold as much.
 */
export function sortProcesses(
  gpus: readonly { index: number; processes: readonly IGpuProcess[] }[]
): IGpuProcessEntry[] {
  const rank = (process: IGpuProcess): number => {
    const owner = processOwner(process);
    switch (owner.kind) {
      case 'kernel':
        return owner.own ? 0 : 2;
      case 'user':
        return owner.own ? 1 : 2;
      case 'unknown':
        return 3;
      case 'invisible':
        return 4;
    }
  };
  const entries: IGpuProcessEntry[] = [];
  for (const gpu of gpus) {
    for (const process of gpu.processes) {
      entries.push({ gpuIndex: gpu.index, process });
    }
  }
  return entries.sort(
    ({ process: a }, { process: b }) =>
      rank(a) - rank(b) || (b.used_memory_mib ?? -1) - (a.used_memory_mib ?? -1)
  );
}

/**
 * One process and the GPUs it runs on: a row of the process list. A
 * process on 8 GPUs is one row ("GPUs 0–7"), not 8 alike.
 */
export interface IGpuProcessRow {
  /**
   * The process as the snapshot has it on the first of its GPUs.
   */
  process: IGpuProcess;
  /**
   * The GPUs it runs on, by index, in order.
   */
  gpuIndices: number[];
  /**
   * What it holds on each of them, in MiB (null where not read), in the
   * order of {@link gpuIndices}.
   */
  memoryByGpu: (number | null)[];
  /**
   * What it holds on all of them, in MiB; null when none was read.
   */
  memoryMiB: number | null;
}

/**
 * How the process list is sorted: the owners' order (the user's own
 * kernels first, see {@link sortProcesses}), or by a column as a click on its
 * head asks, as nvitop does.
 */
export type ProcessSort = 'owner' | 'gpu' | 'memory';

/**
 * The process list's rows: each process once with all its GPUs (the same
 * pid on the same MIG instance), in the order `sort` asks.
 */
export function processRows(
  gpus: readonly { index: number; processes: readonly IGpuProcess[] }[],
  sort: ProcessSort = 'owner'
): IGpuProcessRow[] {
  const rows = new Map<string, IGpuProcessRow>();
  for (const { gpuIndex, process } of sortProcesses(gpus)) {
    const key = `${process.pid}:${process.gpu_instance_id}`;
    const row = rows.get(key);
    if (row) {
      row.gpuIndices.push(gpuIndex);
      row.memoryByGpu.push(process.used_memory_mib);
    } else {
      rows.set(key, {
        process,
        gpuIndices: [gpuIndex],
        memoryByGpu: [process.used_memory_mib],
        memoryMiB: null
      });
    }
  }
  const result = [...rows.values()];
  for (const row of result) {
    const read = row.memoryByGpu.filter((mib): mib is number => mib !== null);
    row.memoryMiB = read.length
      ? read.reduce((sum, mib) => sum + mib, 0)
      : null;
    // The GPUs in order, with their memory.
    const order = row.gpuIndices
      .map((index, at) => ({ index, mib: row.memoryByGpu[at] }))
      .sort((a, b) => a.index - b.index);
    row.gpuIndices = order.map(({ index }) => index);
    row.memoryByGpu = order.map(({ mib }) => mib);
  }
  switch (sort) {
    case 'owner':
      return result;
    case 'gpu':
      return result.sort(
        (a, b) =>
          a.gpuIndices[0] - b.gpuIndices[0] ||
          (b.memoryMiB ?? -1) - (a.memoryMiB ?? -1)
      );
    case 'memory':
      return result.sort((a, b) => (b.memoryMiB ?? -1) - (a.memoryMiB ?? -1));
  }
}

/**
 * GPU indices for a person, runs of three or more joined: "0–7", "0, 2",
 * "0–3, 6".
 */
export function formatGpuIndices(indices: readonly number[]): string {
  const parts: string[] = [];
  for (let at = 0; at < indices.length;) {
    let end = at;
    while (end + 1 < indices.length && indices[end + 1] === indices[end] + 1) {
      end++;
    }
    if (end - at >= 2) {
      parts.push(`${indices[at]}–${indices[end]}`);
    } else {
      for (let each = at; each <= end; each++) {
        parts.push(String(indices[each]));
      }
    }
    at = end + 1;
  }
  return parts.join(', ');
}

/**
 * Who holds a GPU, for its row: the owner of the visible process that holds
 * the most memory on it (a notebook of this server, or a user), and "+2"
 * for its other owners, those not visible from here among them; null when
 * no process on it is visible from here.
 */
export function gpuHolder(
  gpu: { processes: readonly IGpuProcess[] },
  trans: TranslationBundle
): string | null {
  const owners = new Map<string, string | null>();
  const byMemory = [...gpu.processes].sort(
    (a, b) => (b.used_memory_mib ?? -1) - (a.used_memory_mib ?? -1)
  );
  for (const process of byMemory) {
    const owner = processOwner(process);
    switch (owner.kind) {
      case 'kernel':
        owners.set(
          `kernel:${owner.kernelId}`,
          kernelLabel(owner.kernelId, owner.path, trans)
        );
        break;
      case 'user':
        owners.set(
          `user:${owner.user}`,
          owner.user ?? trans.__('unknown user')
        );
        break;
      default:
        owners.set(`pid:${process.pid}`, null);
    }
  }
  const named = [...owners.values()].find(
    (label): label is string => label !== null
  );
  if (named === undefined) {
    return null;
  }
  return owners.size > 1 ? trans.__('%1 +%2', named, owners.size - 1) : named;
}
