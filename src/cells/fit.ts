import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';

import { freeMemory, selectable } from '../freeGpu/freeGpu';
import { kernelHoldings } from '../gpu/processes';
import { formatList, formatMemory, formatSentences } from '../format/units';
import { MAX_MESSAGE_LENGTH } from '../notification';
import { IKernelGpus, INotebookGpuNeed } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';

/**
 * Whether a notebook's recorded need fits on the GPUs its kernel would use
 * now, and which GPUs have room when it does not.
 */
export interface IGpuFit {
  /**
   * The memory it needs on each of the GPUs it used, in MiB, in their
   * order.
   */
  perGpuMiB: readonly number[];
  /**
   * The GPUs its kernel would use: the first of those visible to it, as
   * many as it used.
   */
  chosen: number[];
  /**
   * Whether each of them has the memory it needs.
   */
  fits: boolean;
  /**
   * The first of them short of memory, and the memory it has for the
   * notebook, in MiB; null when it fits or too few GPUs are visible.
   */
  short: { index: number; freeMiB: number } | null;
  /**
   * When it does not fit: as many GPUs as it used that each have the memory
   * it needs, by index; null when it fits or no such GPUs exist now.
   */
  suggestion: number[] | null;
}

/**
 * Check a notebook's need against the GPUs now.
 *
 * The memory a GPU has for the notebook is what is free plus what its own
 * kernel already holds there (reopened, its kernel may still run).
 *
 * @param visible - the indices of the GPUs visible to its kernel
 *   (`CUDA_VISIBLE_DEVICES`), in the kernel's order; null for all
 * @param kernelId - its kernel; null when it has none
 * @returns null when the snapshot has no GPU to check against
 */
export function checkFit(
  need: INotebookGpuNeed,
  snapshot: IGpuSnapshot,
  visible: readonly number[] | null,
  kernelId: string | null
): IGpuFit | null {
  const gpus = snapshot.error === null ? snapshot.gpus : [];
  if (gpus.length === 0) {
    return null;
  }
  const held = kernelId ? kernelHoldings(gpus, kernelId) : new Map();
  const room = new Map(
    gpus.map(gpu => [gpu.index, freeMemory(gpu) + (held.get(gpu.index) ?? 0)])
  );
  // Its GPUs in order, each with what that GPU held: the kernel's first
  // visible GPU is its cuda:0, which held the first recorded peak.
  const perGpuMiB = need.perGpuMiB;
  const chosen = (visible ?? gpus.map(gpu => gpu.index))
    .filter(index => room.has(index))
    .slice(0, need.gpuCount);
  const enough = chosen.length === need.gpuCount;
  const shortIndex = enough
    ? chosen.find((index, place) => room.get(index)! < perGpuMiB[place])
    : undefined;
  const fits = enough && shortIndex === undefined;
  // The roomiest GPUs for the largest needs, each with room for its own.
  const roomy = gpus
    .filter(gpu => selectable(gpu))
    .sort((a, b) => room.get(b.index)! - room.get(a.index)!)
    .slice(0, need.gpuCount);
  const largestFirst = [...perGpuMiB].sort((a, b) => b - a);
  const roomEnough =
    roomy.length === need.gpuCount &&
    roomy.every((gpu, place) => room.get(gpu.index)! >= largestFirst[place]);
  const suggestion = roomy.map(gpu => gpu.index).sort((a, b) => a - b);
  return {
    perGpuMiB,
    chosen,
    fits,
    short:
      shortIndex === undefined
        ? null
        : { index: shortIndex, freeMiB: room.get(shortIndex)! },
    suggestion: fits || !roomEnough ? null : suggestion
  };
}

/**
 * The GPUs a notebook's kernel sees, when the environment inspector says so
 * for that notebook (it names the notebook by its tab label, the file's
 * name); null when unknown, which checks against every GPU.
 */
export function gpusVisibleTo(
  path: string,
  kernelGpus: IKernelGpus | null
): readonly number[] | null {
  return kernelGpus !== null && kernelGpus.label === PathExt.basename(path)
    ? kernelGpus.indices
    : null;
}

/**
 * What a notebook needed: "needed 38.7 GiB at its peak on 2 × NVIDIA RTX
 * A5000".
 */
export function needText(
  need: INotebookGpuNeed,
  trans: TranslationBundle
): string {
  const memory = formatMemory(need.peakMemoryMiB, trans);
  const gpu = need.gpuName ?? trans.__('a GPU');
  return need.gpuCount > 1
    ? trans.__('needed %1 at its peak on %2 × %3', memory, need.gpuCount, gpu)
    : trans.__('needed %1 at its peak on %2', memory, gpu);
}

/**
 * Whether it fits and where there is room: "GPU 0 has only 1.6 GiB free.
 * GPU 1 has room."
 */
export function fitText(fit: IGpuFit, trans: TranslationBundle): string {
  if (fit.fits) {
    return trans._n(
      'It fits on GPU %2.',
      'It fits on GPUs %2.',
      fit.chosen.length,
      formatList(fit.chosen.map(String), trans)
    );
  }
  const problem =
    fit.short === null
      ? trans._n(
          'Its kernel sees %1 GPU.',
          'Its kernel sees %1 GPUs.',
          fit.chosen.length
        )
      : trans.__(
          'GPU %1 has only %2 free.',
          fit.short.index,
          formatMemory(fit.short.freeMiB, trans)
        );
  const remedy =
    fit.suggestion === null
      ? trans.__('No GPU has that much free now.')
      : trans._n(
          'GPU %2 has room.',
          'GPUs %2 have room.',
          fit.suggestion.length,
          formatList(fit.suggestion.map(String), trans)
        );
  return formatSentences(problem, remedy, trans);
}

/**
 * The notification of a notebook that does not fit, at most
 * {@link MAX_MESSAGE_LENGTH} characters:
 * "train.ipynb needed 1005 MiB at its peak; GPU 0 has only 1.6 GiB free.
 * GPU 1 has room."
 */
export function fitWarning(
  path: string,
  need: INotebookGpuNeed,
  fit: IGpuFit,
  trans: TranslationBundle
): string {
  const details = fitText(fit, trans);
  const peak =
    need.gpuCount > 1
      ? trans.__(
          'needed %1 on its %2 GPUs at its peak',
          formatList(
            fit.perGpuMiB.map(mib => formatMemory(mib, trans)),
            trans
          ),
          need.gpuCount
        )
      : trans.__(
          'needed %1 at its peak',
          formatMemory(need.peakMemoryMiB, trans)
        );
  // The name gets what the figures leave of a notification.
  const room = Math.max(
    12,
    MAX_MESSAGE_LENGTH - peak.length - details.length - 3
  );
  const name = Private.shorten(PathExt.basename(path), room);
  return trans.__('%1 %2; %3', name, peak, details);
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * A name cut to `length` characters with an ellipsis in the middle, so
   * that its start and its extension stay.
   */
  export function shorten(name: string, length: number): string {
    if (name.length <= length) {
      return name;
    }
    const tail = Math.floor((length - 1) / 2);
    return `${name.slice(0, length - 1 - tail)}…${name.slice(name.length - tail)}`;
  }
}
