import { largestGpuNeed, IRoomNeeded } from '../freeGpu/freeGpu';
import { ILabGpu, ILabNode, ILabView } from '../restapi/gpus';
import { LOW_UTILIZATION_PERCENT } from '../restapi/rules';

/**
 * Which GPUs of the lab are shown: all, the free ones, the user's own
 * notebooks', or one user's.
 */
export type LabFilter =
  | { kind: 'all' }
  | { kind: 'free' }
  | { kind: 'mine' }
  | { kind: 'user'; user: string };

/**
 * The machines with only the GPUs the filter keeps; with a filter, a
 * machine left with none is left out.
 */
export function filterLab(
  nodes: readonly ILabNode[],
  filter: LabFilter
): ILabNode[] {
  if (filter.kind === 'all') {
    return [...nodes];
  }
  const keeps = (gpu: ILabGpu): boolean => {
    switch (filter.kind) {
      case 'free':
        return gpu.free;
      case 'mine':
        return gpu.holders.some(holder => holder.own);
      case 'user':
        return gpu.holders.some(holder => holder.user === filter.user);
    }
  };
  return nodes
    .map(node => ({ ...node, gpus: node.gpus.filter(keeps) }))
    .filter(node => node.gpus.length > 0);
}

/**
 * Every user who holds memory on a GPU of the lab, by name.
 */
export function labUsers(nodes: readonly ILabNode[]): string[] {
  const users = new Set<string>();
  for (const node of nodes) {
    for (const gpu of node.gpus) {
      gpu.holders.forEach(holder => users.add(holder.user));
    }
  }
  return [...users].sort();
}

/**
 * A GPU of the lab proposed for the current notebook.
 */
export interface ILabChoice {
  /**
   * Its machine.
   */
  node: ILabNode;
  /**
   * The GPU.
   */
  gpu: ILabGpu;
  /**
   * Its memory free, in MiB.
   */
  freeMiB: number;
  /**
   * What the notebook recorded needing on one GPU, in MiB; null without a
   * record.
   */
  needMiB: number | null;
}

/**
 * The best GPU of the lab for the notebook: on a reporting machine, with
 * the room needed free (what its cells recorded on one GPU, else the share
 * of the card the panel's setting asks); nobody's holding before anybody's,
 * then the least used (all under the low-utilisation line alike), the
 * longest idle, the most memory free. Null when
 * no GPU has the room.
 */
export function freeAnywhere(
  view: ILabView,
  room: IRoomNeeded
): ILabChoice | null {
  const needMiB = room.need ? largestGpuNeed(room.need) : null;
  const candidates: ILabChoice[] = [];
  for (const node of view.nodes) {
    if (!node.reporting) {
      continue;
    }
    for (const gpu of node.gpus) {
      if (gpu.memory_total_mib === null || gpu.memory_used_mib === null) {
        continue;
      }
      const freeMiB = gpu.memory_total_mib - gpu.memory_used_mib;
      if (freeMiB >= (needMiB ?? room.minFreeShare * gpu.memory_total_mib)) {
        candidates.push({ node, gpu, freeMiB, needMiB });
      }
    }
  }
  // Under the low-utilisation line, a GPU is as good as idle: then the
  // longest idle is the safest bet.
  const busy = (gpu: ILabGpu): number =>
    gpu.utilization_gpu === null
      ? 100
      : gpu.utilization_gpu < LOW_UTILIZATION_PERCENT
        ? 0
        : gpu.utilization_gpu;
  const rank = (choice: ILabChoice): number[] => [
    choice.gpu.free ? 0 : 1,
    busy(choice.gpu),
    choice.gpu.idle_since ?? Infinity,
    -choice.freeMiB
  ];
  candidates.sort((a, b) => {
    const [left, right] = [rank(a), rank(b)];
    const differs = left.findIndex((value, i) => value !== right[i]);
    return differs < 0 ? 0 : left[differs] - right[differs];
  });
  return candidates[0] ?? null;
}
