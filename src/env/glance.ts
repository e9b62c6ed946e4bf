import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';

import { IEnvironmentInspector } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { kernelVisibleDevices, visibleGpuIndices } from './gpus';

/**
 * The kernel's environment at a glance, from the best source there is: the
 * probe, else what the server reads of the process and the environment's
 * records. `undefined` is unknown; null is known to be absent.
 */
export interface IEnvironmentGlance {
  /**
   * The environment's name.
   */
  name: string | null;
  /**
   * `conda-root`, `conda-env`, `venv`, `conda` or `system`.
   */
  kind: string | null;
  /**
   * The environment's folder.
   */
  prefix: string | null;
  /**
   * The Python version and implementation.
   */
  python: string | null;
  /**
   * PyTorch's version; null when not installed.
   */
  torch: string | null | undefined;
  /**
   * The CUDA version torch is built for, `cpu` for a CPU-only build; null
   * when unknown.
   */
  torchCuda: string | null;
  /**
   * Whether torch can use CUDA; null when unknown (no deep check).
   */
  cudaUsable: boolean | null;
  /**
   * The kernel's `CUDA_VISIBLE_DEVICES`; null when not set.
   */
  visibleDevices: string | null | undefined;
  /**
   * The indices of the GPUs the kernel can use; null when unknown.
   */
  visibleGpus: number[] | null;
  /**
   * The GPUs torch sees, by name, after a deep check; null otherwise.
   */
  torchDevices: string[] | null;
}

/**
 * What the inspector knows of the kernel's environment, at a glance.
 *
 * @param snapshot - the GPUs now, to resolve `CUDA_VISIBLE_DEVICES`
 */
export function glanceAt(
  inspector: IEnvironmentInspector,
  snapshot: IGpuSnapshot | null
): IEnvironmentGlance {
  const { probe, report, environment, serverPackages } = inspector;
  const prefix = probe?.prefix ?? report?.prefix ?? null;
  const condaName =
    probe && probe.conda_prefix === probe.prefix
      ? probe.conda_default_env
      : null;
  let torch: string | null | undefined = undefined;
  if (probe) {
    torch = probe.torch?.version ?? probe.packages['torch'] ?? null;
  } else if (serverPackages) {
    torch = serverPackages['torch'] ?? null;
  }
  const torchCuda = report?.torch_cuda ?? null;
  const visibleDevices = kernelVisibleDevices(probe, report);
  let cudaUsable: boolean | null = probe?.torch?.cuda_available ?? null;
  if (cudaUsable === null && torchCuda === 'cpu') {
    cudaUsable = false;
  }
  return {
    name:
      environment?.name ??
      condaName ??
      (prefix === null ? null : PathExt.basename(prefix)),
    kind: environment?.kind ?? report?.process?.env_kind ?? null,
    prefix,
    python: probe
      ? `${probe.python_version} (${probe.implementation})`
      : (environment?.python_version ?? null),
    torch,
    torchCuda,
    cudaUsable,
    visibleDevices,
    visibleGpus:
      visibleDevices !== undefined && snapshot && !snapshot.error
        ? visibleGpuIndices(visibleDevices, snapshot)
        : null,
    torchDevices: probe?.torch?.devices ?? null
  };
}

/**
 * Why the commands on the inspected kernel are disabled, to show beside
 * them: no notebook or console, or one whose kernel is not running; null
 * when a kernel runs.
 */
export function noKernelReason(
  inspector: IEnvironmentInspector,
  trans: TranslationBundle
): string | null {
  const target = inspector.target;
  if (!target) {
    return trans.__('(open a notebook or console first)');
  }
  return target.sessionContext.session?.kernel
    ? null
    : trans.__('(start its kernel first)');
}
