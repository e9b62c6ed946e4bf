import { IGpuSnapshot } from '../restapi/gpus';
import { IDiagnosis, IKernelProbe } from '../restapi/inspector';

/**
 * The nvidia-smi indices of the GPUs a process with this
 * `CUDA_VISIBLE_DEVICES` can use, as CUDA reads the variable: unset means
 * every GPU; each entry is an index or a unique prefix of a GPU's or MIG
 * device's UUID (a MIG device counts for its GPU); CUDA stops at the first
 * entry it cannot use and ignores the rest.
 *
 * nvidia-smi ignores the variable and always lists every GPU: only the
 * kernel's own environment tells which it can use. Indices are taken in
 * nvidia-smi's (PCI bus) order, which is CUDA's under
 * `CUDA_DEVICE_ORDER=PCI_BUS_ID` and on machines of one GPU model.
 */
export function visibleGpuIndices(
  cudaVisibleDevices: string | null,
  snapshot: IGpuSnapshot
): number[] {
  const gpus = snapshot.gpus;
  if (cudaVisibleDevices === null) {
    return gpus.map(gpu => gpu.index);
  }
  const visible: number[] = [];
  for (const raw of cudaVisibleDevices.split(',')) {
    const entry = raw.trim();
    const index = Private.gpuOf(entry, snapshot);
    if (index === null) {
      break;
    }
    if (!visible.includes(index)) {
      visible.push(index);
    }
  }
  return visible;
}

/**
 * The kernel's `CUDA_VISIBLE_DEVICES`: the probe's (the kernel may have set it
 * since it started), else the one its process started with; null when it is
 * not set, undefined when unknown (a remote kernel the probe has not reached).
 */
export function kernelVisibleDevices(
  probe: IKernelProbe | null,
  report: IDiagnosis | null
): string | null | undefined {
  if (probe) {
    return probe.cuda_visible_devices;
  }
  const process = report?.process;
  return process?.readable
    ? (process.variables['CUDA_VISIBLE_DEVICES'] ?? null)
    : undefined;
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The GPU an entry of `CUDA_VISIBLE_DEVICES` names; null when none.
   */
  export function gpuOf(entry: string, snapshot: IGpuSnapshot): number | null {
    if (/^\d+$/.test(entry)) {
      const position = Number(entry);
      return position < snapshot.gpus.length
        ? snapshot.gpus[position].index
        : null;
    }
    if (entry === '') {
      return null;
    }
    const owners: number[] = [];
    for (const gpu of snapshot.gpus) {
      const uuids = [gpu.uuid, ...gpu.mig_devices.map(device => device.uuid)];
      for (const uuid of uuids) {
        if (uuid?.startsWith(entry)) {
          owners.push(gpu.index);
        }
      }
    }
    return owners.length === 1 ? owners[0] : null;
  }
}
