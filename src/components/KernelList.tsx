import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { canReleaseCache } from '../kernels/cacheRelease';
import { idleHeld } from '../kernels/idleHeld';
import {
  formatDuration,
  formatList,
  formatMemory,
  formatPercent
} from '../format/units';
import { IKernelSummary } from '../restapi/kernels';
import { LOW_UTILIZATION_PERCENT } from '../restapi/rules';
import { IPanelActions } from './actions';
import { KernelOwner } from './KernelOwner';

/**
 * The properties of {@link KernelList}.
 */
export namespace KernelList {
  /**
   * The properties of {@link KernelList}.
   */
  export interface IProps {
    /**
     * This server's kernels.
     */
    kernels: readonly IKernelSummary[];
    /**
     * The time of the latest read, in seconds since the epoch (the server's
     * clock, as the kernels' idle-held times are).
     */
    now: number;
    /**
     * What the links and buttons do.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * "My kernels": each of this server's kernels with the GPU memory it holds
 * across GPUs, the most first, so that a forgotten notebook holding 30 GiB
 * is one click from being freed (an idle one that imported torch may also
 * give back what torch caches); under its name, the CPU and memory it and
 * the processes it started use, and how long it has held GPU memory idle.
 */
export function KernelList(props: KernelList.IProps): React.ReactElement {
  const { actions, trans } = props;
  const kernels = [...props.kernels].sort(
    (a, b) => b.memory_used_mib - a.memory_used_mib
  );
  return (
    <section
      className="jp-GpuMonitor-kernels"
      aria-labelledby="jp-GpuMonitor-kernelsTitle"
    >
      <h3
        id="jp-GpuMonitor-kernelsTitle"
        className="jp-GpuMonitor-kernelsTitle"
      >
        {trans.__('My kernels')}
      </h3>
      <table
        className="jp-GpuMonitor-processes jp-GpuMonitor-kernelTable"
        aria-label={trans.__('GPU memory of my kernels')}
      >
        <colgroup>
          <col />
          <col className="jp-GpuMonitor-kernelMemoryColumn" />
        </colgroup>
        <thead>
          <tr>
            <th scope="col">{trans.__('Notebook')}</th>
            <th scope="col">{trans.__('GPU memory')}</th>
          </tr>
        </thead>
        <tbody>
          {kernels.map(kernel => (
            <tr key={kernel.kernel_id}>
              <td className="jp-GpuMonitor-owner">
                <KernelOwner
                  kernelId={kernel.kernel_id}
                  path={kernel.session_path}
                  withButtons={true}
                  canReleaseCache={canReleaseCache(kernel)}
                  actions={actions}
                  trans={trans}
                />
                {kernel.memory_rss_mib !== null && (
                  <span
                    className="jp-GpuMonitor-kernelMachine"
                    title={trans._n(
                      'CPU and memory of the kernel and the %1 process it started',
                      'CPU and memory of the kernel and the %1 processes it started',
                      Math.max(0, (kernel.processes ?? 1) - 1)
                    )}
                  >
                    {Private.machineUse(kernel, trans)}
                  </span>
                )}
                {Private.idleHeldLine(kernel, props.now, trans)}
              </td>
              <td>
                {Private.memory(kernel, trans)}
                {kernel.gpus.length > 0 && (
                  <span className="jp-GpuMonitor-perGpu">
                    {Private.perGpu(kernel, trans)}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The memory a kernel holds on all GPUs: "38.7 GiB", "none", or "remote"
   * for a kernel this server cannot see the processes of.
   */
  export function memory(
    kernel: IKernelSummary,
    trans: TranslationBundle
  ): string {
    if (kernel.remote) {
      return trans.__('remote');
    }
    return kernel.gpus.length === 0
      ? trans.__('none')
      : formatMemory(kernel.memory_used_mib, trans);
  }

  /**
   * What it uses of the machine: "CPU 37 % · RAM 2.1 GiB" (CPU in percent
   * of one core: 400 % is four cores busy).
   */
  export function machineUse(
    kernel: IKernelSummary,
    trans: TranslationBundle
  ): string {
    const ram = trans.__('RAM %1', formatMemory(kernel.memory_rss_mib!, trans));
    return kernel.cpu_percent === null
      ? ram
      : trans.__('CPU %1 · %2', formatPercent(kernel.cpu_percent, trans), ram);
  }

  /**
   * "Idle 2 h 10 min, holding 30.1 GiB": how long the kernel has held GPUs
   * idle, and the memory it holds there; nothing under a minute.
   */
  export function idleHeldLine(
    kernel: IKernelSummary,
    now: number,
    trans: TranslationBundle
  ): React.ReactElement | null {
    const held = idleHeld(kernel, now);
    if (held === null) {
      return null;
    }
    return (
      <span
        className="jp-GpuMonitor-idleHeld"
        title={trans.__(
          'The kernel has been idle, its GPUs under %1 %, while it held this memory',
          LOW_UTILIZATION_PERCENT
        )}
      >
        {trans.__(
          'Idle %1, holding %2',
          formatDuration(held.seconds, trans),
          formatMemory(held.mib, trans)
        )}
      </span>
    );
  }

  /**
   * The memory it holds on each GPU: "GPU 0: 21.9 GiB, GPU 1: 16.8 GiB".
   */
  export function perGpu(
    kernel: IKernelSummary,
    trans: TranslationBundle
  ): string {
    return formatList(
      kernel.gpus.map(gpu =>
        trans.__(
          'GPU %1: %2',
          gpu.index,
          formatMemory(gpu.memory_used_mib, trans)
        )
      ),
      trans
    );
  }
}
