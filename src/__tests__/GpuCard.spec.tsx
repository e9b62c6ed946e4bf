import { nullTranslator } from '@jupyterlab/translation';
import { fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';

import { GpuCard } from '../components/GpuCard';
import { fakeActions } from './panelActions';
import {
  a100MigSnapshot,
  a5000KernelSnapshot,
  a5000Snapshot
} from './payloads';

const trans = nullTranslator.load('jupyterlab_gpu_monitor');

/**
 * The properties every card gets: when it was read and what its buttons do.
 */
const common = { now: 1796015500, actions: fakeActions(), trans };

describe('GpuCard', () => {
  it('shows the readings of GPU 0 of the capture', () => {
    const gpu = a5000Snapshot().gpus[0];

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    const card = getByRole('article', { name: 'GPU 0 NVIDIA RTX A5000' });
    const memory = within(card).getByRole('meter', { name: 'Memory' });
    expect(memory.getAttribute('aria-valuetext')).toBe('21.9 / 24.0 GiB');
    expect(memory.getAttribute('aria-valuenow')).toBe('22437');
    expect(memory.getAttribute('aria-valuemax')).toBe('24564');
    expect(
      within(card)
        .getByRole('meter', { name: 'Utilization' })
        .getAttribute('aria-valuetext')
    ).toBe('0 %');
    expect(card.textContent).toContain('Temperature13 °C');
    expect(card.textContent).toContain('Power6.5 / 230 W');
    expect(card.textContent).toContain('Fan30 %');
    expect(within(card).queryByRole('table', { name: /MIG/ })).toBeNull();
  });

  it("links a process to its kernel's notebook, with memory, age and kernel buttons", () => {
    const snapshot = a5000KernelSnapshot();
    const gpu = snapshot.gpus[0];
    const actions = fakeActions();

    const { getByRole } = render(
      <GpuCard
        gpu={gpu}
        kernelGpus={null}
        now={gpu.processes[0].started! + 754}
        actions={actions}
        trans={trans}
      />
    );

    const table = getByRole('table', { name: 'Processes on GPU 0' });
    const texts = (role: 'columnheader' | 'cell') =>
      within(table)
        .getAllByRole(role)
        .map(element => element.textContent);
    expect(texts('columnheader')).toEqual(['PID', 'Owner', 'Memory', 'Age']);
    expect(texts('cell')).toEqual([
      `${gpu.processes[0].pid}`,
      'train.ipynb',
      '21.9 GiB',
      '12 min'
    ]);
    fireEvent.click(within(table).getByRole('link', { name: 'train.ipynb' }));
    expect(actions.openPath).toHaveBeenCalledWith('train.ipynb');
    fireEvent.click(
      within(table).getByRole('button', {
        name: 'Shut down the kernel of train.ipynb'
      })
    );
    expect(actions.shutDownKernel).toHaveBeenCalledWith(
      gpu.processes[0].kernel_id,
      'train.ipynb'
    );
    fireEvent.click(
      within(table).getByRole('button', {
        name: 'Interrupt the kernel of train.ipynb'
      })
    );
    expect(actions.interruptKernel).toHaveBeenCalledTimes(1);
  });

  it('says a process the driver reports from another PID namespace is not visible, and offers no action', () => {
    // The capture's llama-server, which this server's namespace has not.
    const gpu = a5000Snapshot().gpus[0];

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    const table = getByRole('table', { name: 'Processes on GPU 0' });
    expect(within(table).getAllByRole('row')[1].textContent).toBe(
      '100477not visible from this container21.9 GiB'
    );
    expect(within(table).queryAllByRole('button')).toHaveLength(0);
  });

  it("lists the user's own kernels first, then other users' processes by memory, without their command", () => {
    const gpu = a5000KernelSnapshot().gpus[0];
    const kernel = gpu.processes[0];
    const others = [
      { pid: 4242, used_memory_mib: 512, user: 'bob', own: false },
      { pid: 4243, used_memory_mib: 30000, user: 'carol', own: false }
    ].map(process => ({
      ...kernel,
      ...process,
      name: null,
      kernel_id: null,
      session_path: null
    }));
    gpu.processes = [...others, kernel];

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    const rows = within(getByRole('table')).getAllByRole('row').slice(1);
    expect(
      rows.map(row => (row as HTMLTableRowElement).cells[1].textContent)
    ).toEqual(['train.ipynb', 'carol', 'bob']);
    expect(within(rows[1]).queryAllByRole('button')).toHaveLength(0);
  });

  it('says when no process uses the GPU', () => {
    const gpu = { ...a5000Snapshot().gpus[1], processes: [] };

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    expect(getByRole('table').textContent).toContain(
      'No process is using this GPU.'
    );
  });

  it('says how many processes the server left out', () => {
    const gpu = { ...a5000Snapshot().gpus[0], processes_omitted: 5744 };

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    const rows = within(getByRole('table')).getAllByRole('row');
    expect(rows[rows.length - 1].textContent).toBe(
      '5744 more processes, holding less memory, are not shown.'
    );
  });

  it('shows the MIG instances and "n/a under MIG" where MIG hides a reading', () => {
    const gpu = a100MigSnapshot().gpus[0];

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    const utilization = getByRole('meter', { name: 'Utilization' });
    expect(utilization.getAttribute('aria-valuetext')).toBe('n/a under MIG');
    expect(utilization.getAttribute('aria-valuenow')).toBeNull();
    // No fan on this SXM board, for another reason than MIG.
    expect(getByRole('article').textContent).toContain('Fann/a');
    const instances = getByRole('table', { name: 'MIG instances of GPU 0' });
    const rows = within(instances).getAllByRole('row').slice(1);
    expect(rows.map(row => row.textContent)).toEqual([
      'MIG 0 (GI 3, CI 0)0.0 / 19.5 GiB',
      'MIG 1 (GI 4, CI 0)0.0 / 19.5 GiB',
      'MIG 2 (GI 5, CI 0)0.0 / 19.5 GiB',
      'MIG 3 (GI 6, CI 0)0.0 / 19.5 GiB'
    ]);
  });

  it("marks a GPU the notebook's kernel can see", () => {
    const [first, second] = a5000Snapshot().gpus;
    const kernelGpus = { label: 'train.ipynb', indices: [1] };

    const { getAllByRole } = render(
      <>
        <GpuCard gpu={first} kernelGpus={kernelGpus} {...common} />
        <GpuCard gpu={second} kernelGpus={kernelGpus} {...common} />
      </>
    );

    const [card0, card1] = getAllByRole('article');
    expect(card0.textContent).not.toContain('Visible to');
    expect(card1.textContent).toContain('Visible to train.ipynb');
    expect(card1.classList).toContain('jp-mod-kernelVisible');
  });

  it("shows a GPU's own error", () => {
    const gpu = {
      ...a5000Snapshot().gpus[0],
      error: {
        kind: 'gpu_lost' as const,
        message: 'GPU is lost',
        hint: 'Reboot the machine.'
      }
    };

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} {...common} />
    );

    expect(getByRole('alert').textContent).toBe(
      'GPU is lostReboot the machine.'
    );
  });
});
