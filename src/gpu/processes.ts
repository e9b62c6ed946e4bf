import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';

import { IGpuProcess } from '../restapi/gpus';

/**
 * Who a GPU process belongs to, as the process list shows it.
 *
 * - `kernel`: one of this server's kernels (or a process it started), with
 *   the notebook or console it serves when it has a session
 * - `user`: a process of a user, this server's or another
 * - `invisible`: the driver reports a pid this server's PID namespace does
 *   not have (a container); nothing is known about it but its memory
 * - `unknown`: the server did not join the process with its owner
 */
export type ProcessOwner =
  | { kind: 'kernel'; kernelId: string; path: string | null; own: boolean }
  | { kind: 'user'; user: string | null; own: boolean }
  | { kind: 'invisible' }
  | { kind: 'unknown' };

/**
 * Who a GPU process belongs to.
 */
export function processOwner(process: IGpuProcess): ProcessOwner {
  if (process.visible === false) {
    return { kind: 'invisible' };
  }
  if (process.kernel_id) {
    return {
      kind: 'kernel',
      kernelId: process.kernel_id,
      path: process.session_path,
      own: process.own ?? false
    };
  }
  if (process.visible) {
    return { kind: 'user', user: process.user, own: process.own ?? false };
  }
  return { kind: 'unknown' };
}

/**
 * The GPU memory a kernel's processes hold on each GPU of a snapshot, in
 * MiB, by GPU index: how much of a GPU the kernel would get back for itself.
 */
export function kernelHoldings(
  gpus: readonly { index: number; processes: readonly IGpuProcess[] }[],
  kernelId: string
): Map<number, number> {
  const held = new Map<number, number>();
  for (const gpu of gpus) {
    for (const process of gpu.processes) {
      if (process.kernel_id === kernelId) {
        held.set(
          gpu.index,
          (held.get(gpu.index) ?? 0) + (process.used_memory_mib ?? 0)
        );
      }
    }
  }
  return held;
}

/**
 * What a kernel serves, for a person: its notebook's or console's file
 * name, or "kernel 1a2b3c4d" when it has no session.
 */
export function kernelLabel(
  kernelId: string,
  path: string | null,
  trans: TranslationBundle
): string {
  return path
    ? PathExt.basename(path)
    : trans.__('kernel %1', kernelId.slice(0, 8));
}
