import * as React from 'react';

import {
  formatAge,
  formatMemory,
  formatMemoryOf,
  formatPercent
} from '../format/units';
import { idleHeld } from '../kernels/idleHeld';
import { KernelFollowingItem } from './KernelFollowingItem';

/**
 * The share of the machine's memory in use from which the item warns: the
 * out-of-memory killer picks the largest process, most often a kernel.
 */
export const MEMORY_WARNING_SHARE = 0.9;

/**
 * The status bar item of the current notebook's kernel: "Kernel: CPU 37 % ·
 * RAM 2.1 GiB" (the kernel and every process it started), marked as a
 * warning while the machine's memory (the container's limit, else the
 * host's) is nearly full; " · GPU idle 2 h" while the kernel holds GPU
 * memory for nothing (what it holds there: My kernels); nothing without a
 * kernel of this server.
 */
export class KernelStatusItem extends KernelFollowingItem {
  /**
   * Create the item.
   */
  constructor(options: KernelStatusItem.IOptions) {
    super(options, 'jp-GpuMonitor-kernelStatusItem');
  }

  /**
   * The item's content.
   */
  render(): React.ReactElement | null {
    const trans = this.trans;
    const kernel = this.model.kernels?.find(
      candidate => candidate.kernel_id === this.kernelId
    );
    const machine = this.model.snapshot?.machine ?? null;
    const nearFull =
      machine !== null &&
      machine.memory_used_mib !== null &&
      !!machine.memory_total_mib &&
      machine.memory_used_mib >=
        MEMORY_WARNING_SHARE * machine.memory_total_mib;
    this.toggleClass('jp-mod-warn', nearFull && !!kernel);
    if (!kernel || kernel.memory_rss_mib === null) {
      return null;
    }
    const ram = formatMemory(kernel.memory_rss_mib, trans);
    const snapshot = this.model.snapshot;
    const held = snapshot ? idleHeld(kernel, snapshot.timestamp) : null;
    const machineText =
      kernel.cpu_percent === null
        ? trans.__('Kernel: RAM %1', ram)
        : trans.__(
            'Kernel: CPU %1 · RAM %2',
            formatPercent(kernel.cpu_percent, trans),
            ram
          );
    const text =
      held === null
        ? machineText
        : trans.__(
            '%1 · GPU idle %2',
            machineText,
            formatAge(held.seconds, trans)
          );
    const lines = [
      trans._n(
        'The kernel of %2 and the %1 process it started: CPU in percent of one core, resident memory.',
        'The kernel of %2 and the %1 processes it started: CPU in percent of one core, resident memory.',
        Math.max(0, (kernel.processes ?? 1) - 1),
        kernel.session_path ?? kernel.kernel_id
      )
    ];
    if (
      machine &&
      machine.memory_used_mib !== null &&
      machine.memory_total_mib
    ) {
      const memory = formatMemoryOf(
        machine.memory_used_mib,
        machine.memory_total_mib,
        trans
      );
      lines.push(
        machine.memory_scope === 'container'
          ? trans.__("The container's memory: %1 in use.", memory)
          : trans.__("The machine's memory: %1 in use.", memory)
      );
    }
    if (nearFull) {
      lines.push(
        trans.__(
          'Nearly full: the kernel may be killed for memory. Free some, or shut down kernels you do not need.'
        )
      );
    }
    return <span title={lines.join('\n')}>{text}</span>;
  }
}

/**
 * The types of {@link KernelStatusItem}.
 */
export namespace KernelStatusItem {
  /**
   * Where the item reads its figures.
   */
  export type IOptions = KernelFollowingItem.IOptions;
}
