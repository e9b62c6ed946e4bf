import { ServerConnection } from '@jupyterlab/services';
import { TranslationBundle } from '@jupyterlab/translation';

import { releaseCachedMemory } from '../api';
import { notificationText } from '../notification';
import { ICacheReleaseAnswer, IKernelSummary } from '../restapi/kernels';
import { formatMemory } from '../format/units';

/**
 * Bytes in a MiB.
 */
const BYTES_PER_MIB = 1024 * 1024;

/**
 * How a notification about a release looks: JupyterLab's notification types.
 */
export type CacheReleaseNoticeKind = 'success' | 'info' | 'warning' | 'error';

/**
 * What to tell the user after asking a kernel to release its cached GPU
 * memory.
 */
export interface ICacheReleaseNotice {
  /**
   * The notification's type.
   */
  kind: CacheReleaseNoticeKind;
  /**
   * Its text, at most as long as a notification shows.
   */
  message: string;
}

/**
 * Whether to offer releasing a kernel's cached GPU memory: one of this
 * server's own kernels that holds GPU memory and is idle. A busy kernel would
 * run the release only after its cell, so the server refuses it.
 */
export function canReleaseCache(kernel: IKernelSummary): boolean {
  return (
    !kernel.remote &&
    kernel.memory_used_mib > 0 &&
    kernel.execution_state === 'idle'
  );
}

/**
 * The notification for the server's answer: how much the GPUs got back, or
 * why there was nothing to release.
 *
 * @param label - what the kernel serves: its notebook's name
 */
export function releaseNotice(
  answer: ICacheReleaseAnswer,
  label: string,
  trans: TranslationBundle
): ICacheReleaseNotice {
  switch (answer.outcome) {
    case 'torch_not_imported':
      return Private.notice(
        'info',
        trans.__('%1 has not imported torch: nothing to release', label)
      );
    case 'cuda_not_initialized':
      return Private.notice(
        'info',
        trans.__(
          '%1 has not used CUDA through torch: nothing to release',
          label
        )
      );
    case 'released': {
      const releasedBytes = answer.released_bytes ?? 0;
      if (releasedBytes === 0) {
        return Private.notice(
          'info',
          trans.__(
            '%1 had no cached GPU memory to release: its tensors use what it holds',
            label
          )
        );
      }
      const amount = formatMemory(releasedBytes / BYTES_PER_MIB, trans);
      return Private.notice(
        'success',
        trans.__('Released %1 of cached GPU memory from %2', amount, label)
      );
    }
  }
}

/**
 * The notification for a refused or failed request, by the server's status.
 *
 * @param error - what the request threw
 * @param label - what the kernel serves: its notebook's name
 */
export function releaseFailureNotice(
  error: unknown,
  label: string,
  trans: TranslationBundle
): ICacheReleaseNotice {
  const status =
    error instanceof ServerConnection.ResponseError
      ? error.response.status
      : null;
  switch (status) {
    case 409:
      return Private.notice(
        'warning',
        trans.__('%1 is running a cell: try again when it is idle', label)
      );
    case 504:
      return Private.notice(
        'warning',
        trans.__(
          '%1 did not answer in time; it may release the memory once idle',
          label
        )
      );
    case 404:
      return Private.notice(
        'error',
        trans.__('The kernel of %1 is no longer running', label)
      );
    default:
      return Private.notice(
        'error',
        trans.__(
          'The cached GPU memory of %1 was not released: %2',
          label,
          error instanceof Error ? error.message : String(error)
        )
      );
  }
}

/**
 * Release the cached GPU memory of a kernel of this server (`label` names
 * it); the notice that says what happened, whatever the server answered.
 */
export async function releaseWithNotice(
  settings: ServerConnection.ISettings,
  kernelId: string,
  label: string,
  trans: TranslationBundle
): Promise<ICacheReleaseNotice> {
  return releaseCachedMemory(settings, kernelId).then(
    answer => releaseNotice(answer, label, trans),
    error => releaseFailureNotice(error, label, trans)
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * A notice, its text cut to what a notification shows.
   */
  export function notice(
    kind: CacheReleaseNoticeKind,
    message: string
  ): ICacheReleaseNotice {
    return { kind, message: notificationText(message) };
  }
}
