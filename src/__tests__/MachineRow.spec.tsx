import { render, within } from '@testing-library/react';
import * as React from 'react';

import { KernelList } from '../components/KernelList';
import { MachineRow } from '../components/MachineRow';
import { IMachineReading } from '../restapi/gpus';
import { fakeActions } from './panelActions';
import { a5000KernelSnapshot, a5000Kernels } from './payloads';
import { trans } from './trans';

/**
 * The time of the read the kernels were recorded after.
 */
const RECORDED = a5000KernelSnapshot().timestamp;

/**
 * The machine the recording server ran on, at its read (its host: no
 * cgroup limits it), with set figures where a test reads them: two cores at
 * 64 and 70 %, 1.6 of 23.5 GiB in use, 72 kB/s read, 36 kB/s written, 5 kB/s
 * each way on the network, 72.4 GiB free.
 */
function recordedMachine(): IMachineReading {
  return {
    ...a5000KernelSnapshot().machine!,
    cpu_scope: 'host',
    memory_scope: 'host',
    cpu_cores: 2,
    cpu_percent: 66.9,
    cpu_core_percents: [64.1, 69.7],
    memory_used_mib: 1612.5,
    memory_total_mib: 24105.1,
    disk_read_bytes_per_second: 71946.7,
    disk_write_bytes_per_second: 35973.3,
    network_received_bytes_per_second: 4800.8,
    network_sent_bytes_per_second: 4800.8,
    root_dir_free_mib: 74173
  };
}

describe('MachineRow', () => {
  it("shows the host's cores, CPU and memory beside the GPUs, each core on hover", () => {
    const { getByRole } = render(
      <MachineRow machine={recordedMachine()} trans={trans} />
    );

    const row = getByRole('group', { name: 'Host 2 cores' });
    const cpu = within(row).getByRole('meter', { name: 'CPU' });
    expect(cpu.getAttribute('aria-valuetext')).toBe('67 %');
    expect(cpu.title).toBe(
      'CPU in use, of the 2 cores\ncore 0: 64 %, core 1: 70 %'
    );
    expect(
      within(row)
        .getByRole('meter', { name: 'Memory' })
        .getAttribute('aria-valuetext')
    ).toBe('1.6 / 23.5 GiB');
    // Disk and network throughput, and the room where the notebooks are.
    expect(row.textContent).toContain('disk ↓72 kB/s ↑36 kB/s');
    expect(row.textContent).toContain('net ↓5 kB/s ↑5 kB/s');
    expect(row.textContent).toContain('72.4 GiB disk free');
  });

  it("says a container's limits are shown, not the node's", () => {
    const machine: IMachineReading = {
      ...recordedMachine(),
      cpu_scope: 'container',
      cpu_cores: 1.5,
      memory_scope: 'container',
      memory_used_mib: 2048,
      memory_total_mib: 4096
    };

    const { getByRole } = render(
      <MachineRow machine={machine} trans={trans} />
    );

    const row = getByRole('group', { name: 'Container 1.5 cores' });
    expect(row.title).toMatch(/^This server's container: its memory limit/);
    expect(
      within(row).getByRole('meter', { name: 'CPU' }).getAttribute('title')
    ).toMatch(/^CPU in use, of the container's 1.5 cores/);
    expect(
      within(row)
        .getByRole('meter', { name: 'Memory' })
        .getAttribute('aria-valuetext')
    ).toBe('2.0 / 4.0 GiB');
  });

  it('says n/a for the CPU at the first read, and a dash for rates not measured yet', () => {
    const machine: IMachineReading = {
      ...recordedMachine(),
      cpu_percent: null,
      cpu_core_percents: [],
      disk_read_bytes_per_second: null,
      disk_write_bytes_per_second: null
    };

    const { getByRole } = render(
      <MachineRow machine={machine} trans={trans} />
    );

    const row = getByRole('group');
    expect(
      within(row).getByRole('meter', { name: 'CPU' }).getAttribute('title')
    ).toBe('CPU in use, of the 2 cores');
    expect(row.textContent).toContain('disk ↓– ↑–');
  });
});

describe("KernelList's machine use", () => {
  it('shows under each kernel the CPU and memory it and its processes use', () => {
    const [train, idle] = a5000Kernels();
    const kernels = [
      { ...train, cpu_percent: 387.4, memory_rss_mib: 9830, processes: 5 },
      idle
    ];

    const { getByRole } = render(
      <KernelList
        kernels={kernels}
        now={RECORDED}
        actions={fakeActions()}
        trans={trans}
      />
    );

    const table = getByRole('table', { name: 'GPU memory of my kernels' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    const busy = first.querySelector('.jp-GpuMonitor-kernelMachine')!;
    expect(busy.textContent).toBe('CPU 387 % · RAM 9.6 GiB');
    expect(busy.getAttribute('title')).toBe(
      'CPU and memory of the kernel and the 4 processes it started'
    );
    expect(
      second.querySelector('.jp-GpuMonitor-kernelMachine')!.textContent
    ).toBe('CPU 0 % · RAM 51 MiB');
  });
});
