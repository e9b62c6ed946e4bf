import { nullTranslator } from '@jupyterlab/translation';
import { render, within } from '@testing-library/react';
import * as React from 'react';

import { GpuCard } from '../components/GpuCard';
import { a100MigSnapshot, a5000Snapshot } from './payloads';

const trans = nullTranslator.load('jupyterlab_gpu_monitor');

describe('GpuCard', () => {
  it('shows the readings of GPU 0 of the capture', () => {
    const gpu = a5000Snapshot().gpus[0];

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} trans={trans} />
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

  it('lists the processes with pid, user, program, memory and a kernel column', () => {
    const gpu = a5000Snapshot().gpus[0];
    // As a server sends it for the user's own process in a notebook's kernel.
    Object.assign(gpu.processes[0], {
      name: '/root/src/llama.cpp/build/bin/llama-server',
      user: 'alice',
      session_path: 'train.ipynb'
    });

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} trans={trans} />
    );

    const table = getByRole('table', { name: 'Processes on GPU 0' });
    const texts = (role: 'columnheader' | 'cell') =>
      within(table)
        .getAllByRole(role)
        .map(element => element.textContent);
    expect(texts('columnheader')).toEqual([
      'PID',
      'User',
      'Process',
      'Memory',
      'Kernel / notebook'
    ]);
    expect(texts('cell')).toEqual([
      '100477',
      'alice',
      'llama-server',
      '21.9 GiB',
      'train.ipynb'
    ]);
  });

  it('says when no process uses the GPU', () => {
    const gpu = { ...a5000Snapshot().gpus[1], processes: [] };

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} trans={trans} />
    );

    expect(getByRole('table').textContent).toContain(
      'No process is using this GPU.'
    );
  });

  it('shows the MIG instances and "n/a under MIG" where MIG hides a reading', () => {
    const gpu = a100MigSnapshot().gpus[0];

    const { getByRole } = render(
      <GpuCard gpu={gpu} kernelGpus={null} trans={trans} />
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
        <GpuCard gpu={first} kernelGpus={kernelGpus} trans={trans} />
        <GpuCard gpu={second} kernelGpus={kernelGpus} trans={trans} />
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
      <GpuCard gpu={gpu} kernelGpus={null} trans={trans} />
    );

    expect(getByRole('alert').textContent).toBe(
      'GPU is lostReboot the machine.'
    );
  });
});
