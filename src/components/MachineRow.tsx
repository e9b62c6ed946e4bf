import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import {
  formatList,
  formatMemory,
  formatMemoryOf,
  formatPercent,
  formatRate
} from '../format/units';
import { IMachineReading } from '../restapi/gpus';
import { MeterBar } from './MeterBar';

/**
 * The properties of {@link MachineRow}.
 */
export namespace MachineRow {
  /**
   * The properties of {@link MachineRow}.
   */
  export interface IProps {
    /**
     * The machine as the latest snapshot has it.
     */
    machine: IMachineReading;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The machine beside the GPUs, in the GPU list's grid: whose figures they
 * are (the container's where its cgroup limits it, else the host's) and its
 * cores, disk and network throughput and the room where the notebooks are;
 * then bars for CPU and memory, lined up with the GPUs'. Each core's use is
 * the CPU bar's tooltip.
 */
export function MachineRow(props: MachineRow.IProps): React.ReactElement {
  const { machine, trans } = props;
  const container = machine.memory_scope === 'container';
  const name = container ? trans.__('Container') : trans.__('Host');
  const headingId = 'jp-GpuMonitor-machine';
  const rates = Private.rates(machine, trans);
  const room =
    machine.root_dir_free_mib === null
      ? null
      : trans.__(
          '%1 disk free',
          formatMemory(machine.root_dir_free_mib, trans)
        );
  return (
    <div
      role="group"
      className="jp-GpuMonitor-gpu jp-GpuMonitor-machine"
      aria-labelledby={headingId}
      title={Private.tooltip(machine, trans)}
    >
      <div className="jp-GpuMonitor-gpuHead">
        <h3 id={headingId} className="jp-GpuMonitor-gpuTitle">
          {name}
          <span className="jp-GpuMonitor-gpuName">
            {trans._n(
              '%1 core',
              '%1 cores',
              Math.round(machine.cpu_cores * 10) / 10
            )}
          </span>
        </h3>
        {room && (
          <span
            className="jp-GpuMonitor-gpuFacts"
            title={trans.__(
              'Free space where the notebooks are (%1)',
              machine.root_dir
            )}
          >
            {room}
          </span>
        )}
      </div>
      {/* A line each: the row keeps its height whatever the figures. */}
      {rates.map(({ text, title }) => (
        <span key={title} className="jp-GpuMonitor-machineRate" title={title}>
          {text}
        </span>
      ))}
      <div className="jp-GpuMonitor-gpuMeters">
        <MeterBar
          label={trans.__('CPU')}
          value={machine.cpu_percent}
          max={100}
          text={
            machine.cpu_percent === null
              ? trans.__('n/a')
              : formatPercent(machine.cpu_percent, trans)
          }
          title={Private.coresTitle(machine, trans)}
        />
        <MeterBar
          label={trans.__('Memory')}
          value={machine.memory_used_mib}
          max={machine.memory_total_mib ?? 0}
          text={
            machine.memory_used_mib === null ||
            machine.memory_total_mib === null
              ? trans.__('n/a')
              : formatMemoryOf(
                  machine.memory_used_mib,
                  machine.memory_total_mib,
                  trans
                )
          }
        />
      </div>
    </div>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The disk and network throughput, each as a short text and what it is.
   */
  export function rates(
    machine: IMachineReading,
    trans: TranslationBundle
  ): { text: string; title: string }[] {
    const pairs = [
      {
        read: machine.disk_read_bytes_per_second,
        write: machine.disk_write_bytes_per_second,
        text: (read: string, write: string) =>
          trans.__('disk ↓%1 ↑%2', read, write),
        title: trans.__("The node's disks: read ↓, written ↑")
      },
      {
        read: machine.network_received_bytes_per_second,
        write: machine.network_sent_bytes_per_second,
        text: (read: string, write: string) =>
          trans.__('net ↓%1 ↑%2', read, write),
        title: trans.__('The network: received ↓, sent ↑')
      }
    ];
    // "–" before two reads: the line is there, so the row keeps its height.
    const rate = (value: number | null) =>
      value === null ? '–' : formatRate(value, trans);
    return pairs.map(pair => ({
      text: pair.text(rate(pair.read), rate(pair.write)),
      title: pair.title
    }));
  }

  /**
   * Each core's use, for the CPU bar's tooltip.
   */
  export function coresTitle(
    machine: IMachineReading,
    trans: TranslationBundle
  ): string {
    const scope =
      machine.cpu_scope === 'container'
        ? trans.__("CPU in use, of the container's %1 cores", machine.cpu_cores)
        : trans.__('CPU in use, of the %1 cores', machine.cpu_cores);
    if (machine.cpu_core_percents.length === 0) {
      return scope;
    }
    const cores = machine.cpu_core_percents.map((percent, core) =>
      trans.__('core %1: %2', core, formatPercent(percent, trans))
    );
    return `${scope}\n${formatList(cores, trans)}`;
  }

  /**
   * Whose figures the row shows, and the swap.
   */
  export function tooltip(
    machine: IMachineReading,
    trans: TranslationBundle
  ): string {
    const lines = [
      machine.memory_scope === 'container'
        ? trans.__(
            "This server's container: its memory limit and use, not the node's"
          )
        : trans.__('The machine this server runs on')
    ];
    if (machine.swap_total_mib) {
      lines.push(
        trans.__(
          'Swap: %1',
          formatMemoryOf(
            machine.swap_used_mib ?? 0,
            machine.swap_total_mib,
            trans
          )
        )
      );
    }
    return lines.join('\n');
  }
}
