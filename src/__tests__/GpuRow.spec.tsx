import { act, fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';

import { GpuRow } from '../components/GpuRow';
import { ProcessList } from '../components/ProcessList';
import { IGpu, IGpuProcess } from '../restapi/gpus';
import { fakeActions } from './panelActions';
import {
  a100MigSnapshot,
  a5000KernelSnapshot,
  a5000Snapshot,
  v100sX8Snapshot
} from './payloads';
import { trans } from './trans';

describe('GpuRow', () => {
  it('shows the readings of GPU 0 of the capture in two lines, the full name and the fan on hover', () => {
    const gpu = a5000Snapshot().gpus[0];

    const { getByRole } = render(
      <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
    );

    const row = getByRole('article', { name: 'GPU 0 NVIDIA RTX A5000' });
    expect(within(row).getByRole('heading').textContent).toBe('GPU 0RTX A5000');
    const memory = within(row).getByRole('meter', { name: 'Memory' });
    expect(memory.getAttribute('aria-valuetext')).toBe('21.9 / 24.0 GiB');
    expect(memory.getAttribute('aria-valuenow')).toBe('22437');
    expect(memory.getAttribute('aria-valuemax')).toBe('24564');
    expect(
      within(row)
        .getByRole('meter', { name: 'Utilization' })
        .getAttribute('aria-valuetext')
    ).toBe('0 %');
    // The temperature and the power draw out of the limit, each under its
    // name on hover.
    expect(within(row).getByTitle('Temperature').textContent).toBe('13 °C');
    expect(
      within(row).getByTitle('Power draw out of the limit').textContent
    ).toBe('6.5 / 230 W');
    expect(row.title).toBe(
      'NVIDIA RTX A5000\nP8 · SM 210 MHz · memory 405 MHz\nPCIe ↓ 450 kB/s ↑ 500 kB/s\n0 rows remapped\nFan 30 %\nBus 00000000:81:00.0'
    );
    expect(within(row).queryByRole('list', { name: /MIG/ })).toBeNull();
    // Idle clocks are no condition.
    expect(within(row).queryByRole('list', { name: /Conditions/ })).toBeNull();
  });

  it('says in plain words, under the bars, that a hot GPU slows its clocks down', () => {
    const gpu = hotV100s();

    const { getByRole } = render(
      <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
    );

    const conditions = getByRole('list', { name: 'Conditions of GPU 3' });
    const [line] = within(conditions).getAllByRole('listitem');
    expect(line.textContent).toBe('Thermal slowdown: 91 °C');
    expect(line.className).toContain('jp-mod-warning');
    expect(line.title).toMatch(/check its fans/);
  });

  it('takes the keyboard focus and then lists what its tooltip tells and what to do about each condition', () => {
    const gpu = hotV100s();
    const { getByRole } = render(
      <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
    );
    const row = getByRole('article', { name: /^GPU 3 / });
    expect(row.tabIndex).toBe(0);
    expect(row.getAttribute('aria-describedby')).toBeNull();

    act(() => row.focus());

    const details = document.getElementById(
      row.getAttribute('aria-describedby')!
    )!;
    const lines = within(details)
      .getAllByRole('listitem')
      .map(item => item.textContent);
    expect(lines[0]).toBe('Tesla V100S-PCIE-32GB');
    expect(lines).toContain('Bus 00000000:00:10.0');
    expect(lines[lines.length - 1]).toMatch(
      /^Thermal slowdown: 91 °C: .*check its fans/
    );

    act(() => row.blur());
    expect(row.getAttribute('aria-describedby')).toBeNull();
  });

  it('puts memory it cannot trust first, with the command that repairs it', () => {
    const gpu = {
      ...v100sX8Snapshot().gpus[5],
      ecc_errors_uncorrected: 2,
      memory_repair_pending: true,
      clock_throttle_reasons: ['sw_power_cap' as const]
    };

    const { getByRole } = render(
      <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
    );

    const lines = within(
      getByRole('list', { name: 'Conditions of GPU 5' })
    ).getAllByRole('listitem');
    expect(lines.map(line => line.textContent)).toEqual([
      '2 uncorrectable memory errors',
      'Memory repair waits for a reset'
    ]);
    expect(lines[0].className).toContain('jp-mod-error');
    expect(lines[0].title).toMatch(/sudo nvidia-smi -r -i 5$/);
    // At the power limit under load is normal: on hover only.
    expect(getByRole('article').title).toContain('At its power limit: 250 W');
  });

  it.each([
    ['Tesla V100S-PCIE-32GB', 'V100S-PCIE-32GB'],
    ['NVIDIA H100 80GB HBM3', 'H100 80GB HBM3'],
    ['NVIDIA GeForce RTX 4090', 'RTX 4090'],
    ['Quadro RTX 6000', 'Quadro RTX 6000'],
    ['NVIDIA', 'NVIDIA']
  ])(
    'shortens the name %s to %s, and keeps it whole as the name of the row',
    (name, shown) => {
      const gpu = { ...a5000Snapshot().gpus[0], name };

      const { getByRole } = render(
        <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
      );

      expect(getByRole('article', { name: `GPU 0 ${name}` })).toBeTruthy();
      expect(getByRole('heading').textContent).toBe(`GPU 0${shown}`);
    }
  );

  it('names every GPU of the 8× V100S server by its short name', () => {
    const { getAllByRole } = render(
      <>
        {v100sX8Snapshot().gpus.map(gpu => (
          <GpuRow key={gpu.index} gpu={gpu} kernelGpus={null} trans={trans} />
        ))}
      </>
    );

    expect(getAllByRole('heading').map(heading => heading.textContent)).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].map(index => `GPU ${index}V100S-PCIE-32GB`)
    );
  });

  it('tells a GPU at 95 % of its memory or more from one at 91 %, in colour and in words', () => {
    const { getAllByRole } = render(
      <>
        {v100sX8Snapshot().gpus.map(gpu => (
          <GpuRow key={gpu.index} gpu={gpu} kernelGpus={null} trans={trans} />
        ))}
      </>
    );

    const memory = getAllByRole('meter', { name: 'Memory' });
    expect(memory.map(meter => meter.getAttribute('aria-valuetext'))).toEqual([
      '30.9 / 31.7 GiB, nearly full',
      '28.9 / 31.7 GiB',
      '28.8 / 31.7 GiB',
      '31.3 / 31.7 GiB, nearly full',
      '28.8 / 31.7 GiB',
      '31.4 / 31.7 GiB, nearly full',
      '31.4 / 31.7 GiB, nearly full',
      '28.8 / 31.7 GiB'
    ]);
    expect(
      memory.map(meter => meter.classList.contains('jp-mod-warn'))
    ).toEqual([true, false, false, true, false, true, true, false]);
  });

  it('tells on hover the energy the GPU used since the driver loaded, where its source counts it', () => {
    // NVML's and DCGM's counter (nvidia-smi has none: no line in the test above).
    const day = { ...v100sX8Snapshot().gpus[0], energy_consumed_j: 26_956_800 };
    const { getByRole, rerender } = render(
      <GpuRow gpu={day} kernelGpus={null} trans={trans} />
    );
    expect(getByRole('article').title).toContain(
      '\n7.5 kWh since the driver loaded\n'
    );
    const hour = { ...day, energy_consumed_j: 1_080_000 };
    rerender(<GpuRow gpu={hour} kernelGpus={null} trans={trans} />);
    expect(getByRole('article').title).toContain(
      '300 Wh since the driver loaded'
    );
  });

  it('shows the MIG instances with their memory, and "MIG" where MIG hides the utilization', () => {
    const gpu = a100MigSnapshot().gpus[0];

    const { getByRole } = render(
      <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
    );

    const utilization = getByRole('meter', { name: 'Utilization' });
    expect(utilization.getAttribute('aria-valuetext')).toBe('n/a under MIG');
    expect(utilization.getAttribute('aria-valuenow')).toBeNull();
    expect(utilization.nextElementSibling!.textContent).toBe('MIG');
    // No fan on this SXM board: nothing about it on hover.
    expect(getByRole('article').title).not.toContain('Fan');
    const instances = getByRole('list', { name: 'MIG instances of GPU 0' });
    const items = within(instances).getAllByRole('listitem');
    // The capture names no profile: the instance's index only.
    expect(items.map(item => item.textContent)).toEqual([
      'MIG 012 MiB / 19.5 GiB',
      'MIG 112 MiB / 19.5 GiB',
      'MIG 212 MiB / 19.5 GiB',
      'MIG 312 MiB / 19.5 GiB'
    ]);
    expect(
      within(items[0])
        .getByText(/^MIG 0/)
        .getAttribute('title')
    ).toBe('GPU instance 3, compute instance 0');
    expect(
      within(items[0])
        .getByRole('meter', { name: 'Memory of MIG 0' })
        .getAttribute('aria-valuetext')
    ).toBe('12 MiB / 19.5 GiB');
  });

  it("marks a GPU the notebook's kernel can see, and says so on hover", () => {
    const [first, second] = a5000Snapshot().gpus;
    const kernelGpus = { label: 'train.ipynb', indices: [1] };

    const { getAllByRole } = render(
      <>
        <GpuRow gpu={first} kernelGpus={kernelGpus} trans={trans} />
        <GpuRow gpu={second} kernelGpus={kernelGpus} trans={trans} />
      </>
    );

    const [row0, row1] = getAllByRole('article');
    expect(row0.title).not.toContain('Visible to');
    expect(row0.classList).not.toContain('jp-mod-kernelVisible');
    expect(row1.title).toContain('Visible to train.ipynb');
    expect(row1.classList).toContain('jp-mod-kernelVisible');
  });

  it('says who holds the GPU on its row: the notebook with the most memory there, and how many others', () => {
    const snapshot = a5000KernelSnapshot();
    const [gpu0] = snapshot.gpus;
    const kernel = gpu0.processes[0];
    const bob = otherUsersProcess(kernel, 4242, 512, 'bob');
    const { getAllByRole } = render(
      <>
        <GpuRow gpu={gpu0} kernelGpus={null} trans={trans} />
        <GpuRow
          gpu={{ ...gpu0, index: 1, processes: [bob, kernel] }}
          kernelGpus={null}
          trans={trans}
        />
        <GpuRow
          gpu={v100sX8Snapshot().gpus[0]}
          kernelGpus={null}
          trans={trans}
        />
      </>
    );

    const holders = getAllByRole('article').map(
      row => row.querySelector('.jp-GpuMonitor-gpuHolder')?.textContent ?? null
    );
    // The V100S's process is not joined to an owner here: no holder said.
    expect(holders).toEqual(['train.ipynb', 'train.ipynb +1', null]);
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
      <GpuRow gpu={gpu} kernelGpus={null} trans={trans} />
    );

    expect(getByRole('alert').textContent).toBe(
      'GPU is lostReboot the machine.'
    );
  });
});

describe('ProcessList', () => {
  /**
   * The table's rows under its head, each as its cells' texts.
   */
  /**
   * The table of a snapshot's processes, read at `now`.
   */
  const processTable = (gpus: IGpu[], now: number): HTMLElement =>
    render(
      <ProcessList
        gpus={gpus}
        now={now}
        actions={fakeActions()}
        trans={trans}
      />
    ).getByRole('table');

  const rows = (table: HTMLElement): string[][] =>
    within(table)
      .getAllByRole('row')
      .slice(1)
      .map(row =>
        Array.from((row as HTMLTableRowElement).cells).map(
          cell => cell.textContent ?? ''
        )
      );

  it("links a process to its kernel's notebook, with its GPU, pid, age, memory and kernel buttons", () => {
    const snapshot = a5000KernelSnapshot();
    const process = snapshot.gpus[0].processes[0];
    const actions = fakeActions();

    const { getByRole } = render(
      <ProcessList
        gpus={snapshot.gpus}
        now={process.started! + 754}
        actions={actions}
        trans={trans}
      />
    );

    const table = getByRole('table', { name: 'Processes on the GPUs' });
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map(element => element.textContent)
    ).toEqual(['GPU', 'Process', 'Memory']);
    // Our own kernel's process: what it uses of the machine, and its
    // command line on hover.
    // One row for the kernel's process on both GPUs, what it holds on each
    // on hover.
    expect(rows(table)[0]).toEqual([
      '0, 1',
      `train.ipynbpid ${process.pid} · 12 min · CPU 0 % · RAM 51 MiB`,
      '38.7 GiB'
    ]);
    expect(
      (within(table).getAllByRole('row')[1] as HTMLTableRowElement).cells[2]
        .title
    ).toBe('GPU 0: 21.9 GiB · GPU 1: 16.8 GiB');
    expect(
      table.querySelector('.jp-GpuMonitor-processDetail')!.getAttribute('title')
    ).toMatch(/python -m ipykernel_launcher -f .*kernel-.*\.json$/);
    fireEvent.click(
      within(table).getAllByRole('link', { name: 'train.ipynb' })[0]
    );
    expect(actions.openPath).toHaveBeenCalledWith('train.ipynb');
    fireEvent.click(
      within(table).getAllByRole('button', {
        name: 'Shut down the kernel of train.ipynb'
      })[0]
    );
    expect(actions.shutDownKernel).toHaveBeenCalledWith(
      process.kernel_id,
      'train.ipynb'
    );
    fireEvent.click(
      within(table).getAllByRole('button', {
        name: 'Interrupt the kernel of train.ipynb'
      })[0]
    );
    expect(actions.interruptKernel).toHaveBeenCalledTimes(1);
  });

  it('says a process the driver reports from another PID namespace is not visible, and offers no action', () => {
    // The capture's llama-server processes, which this server's namespace has not.
    const snapshot = a5000Snapshot();

    const table = processTable(snapshot.gpus, snapshot.timestamp);

    expect(rows(table)).toEqual([
      ['0, 1', 'not visible herepid 100477', '38.7 GiB']
    ]);
    expect(
      within(table).queryAllByRole('button', { name: /kernel/ })
    ).toHaveLength(0);
  });

  it("lists the user's own kernels first, then other users' processes by memory, across the GPUs", () => {
    const snapshot = a5000KernelSnapshot();
    const [gpu0, gpu1] = snapshot.gpus;
    const kernel = gpu0.processes[0];
    const other = (pid: number, mib: number, user: string) =>
      otherUsersProcess(kernel, pid, mib, user);
    const gpus: IGpu[] = [
      { ...gpu0, processes: [other(4242, 512, 'bob'), kernel] },
      { ...gpu1, processes: [other(4243, 30000, 'carol')] }
    ];

    const { getByRole } = render(
      <ProcessList
        gpus={gpus}
        now={snapshot.timestamp}
        actions={fakeActions()}
        trans={trans}
      />
    );

    const table = getByRole('table');
    expect(
      rows(table).map(([gpu, owner]) => [gpu, owner.split('pid')[0]])
    ).toEqual([
      ['0', 'train.ipynb'],
      ['1', 'carol'],
      ['0', 'bob']
    ]);
    expect(within(table).getAllByRole('row')[1].className).toBe('jp-mod-own');
    expect(
      within(table).getAllByRole('button', { name: /kernel/ })
    ).toHaveLength(2);
  });

  it('shows the one process on all eight V100S as one row, and sorts by a column when its head is clicked', () => {
    // The capture's pid 37305 (python) holds 28.8 to 31.4 GiB on each of the
    // 8 GPUs.
    const snapshot = v100sX8Snapshot();
    const table = processTable(snapshot.gpus, snapshot.timestamp);
    expect(rows(table)).toEqual([['0–7', 'pythonpid 37305', '240.4 GiB']]);

    // Three processes on the two A5000: sorted by memory, by GPU, and back.
    const gpus = a5000KernelSnapshot().gpus;
    const kernel = gpus[0].processes[0];
    const bob = otherUsersProcess(kernel, 4242, 60000, 'bob');
    const carol = otherUsersProcess(kernel, 4243, 100, 'carol');
    const { getAllByRole } = render(
      <ProcessList
        gpus={[
          { ...gpus[0], processes: [kernel, carol] },
          { ...gpus[1], processes: [bob] }
        ]}
        now={0}
        actions={fakeActions()}
        trans={trans}
      />
    );
    const mixed = getAllByRole('table')[1];
    const order = () =>
      rows(mixed).map(([gpu, owner, memory]) => [
        gpu,
        owner.split('pid')[0],
        memory
      ]);
    const head = (name: string) =>
      within(mixed).getByRole('button', { name: new RegExp(`^${name}`) });
    expect(order()).toEqual([
      ['0', 'train.ipynb', '21.9 GiB'],
      ['1', 'bob', '58.6 GiB'],
      ['0', 'carol', '100 MiB']
    ]);
    fireEvent.click(head('Memory'));
    expect(order().map(([, owner]) => owner)).toEqual([
      'bob',
      'train.ipynb',
      'carol'
    ]);
    expect(head('Memory').closest('th')!.getAttribute('aria-sort')).toBe(
      'descending'
    );
    fireEvent.click(head('GPU'));
    expect(order().map(([gpu, owner]) => `${gpu} ${owner}`)).toEqual([
      '0 train.ipynb',
      '0 carol',
      '1 bob'
    ]);
    fireEvent.click(head('GPU'));
    expect(order().map(([, owner]) => owner)).toEqual([
      'train.ipynb',
      'bob',
      'carol'
    ]);
  });

  it('says when no process uses a GPU', () => {
    const gpus = a5000Snapshot().gpus.map(gpu => ({ ...gpu, processes: [] }));

    const { getByRole } = render(
      <ProcessList gpus={gpus} now={0} actions={fakeActions()} trans={trans} />
    );

    expect(getByRole('table').textContent).toContain(
      'No process is using a GPU.'
    );
  });

  it('says how many processes the server left out on all GPUs', () => {
    const gpus = a5000Snapshot().gpus.map(gpu => ({
      ...gpu,
      processes_omitted: 2872
    }));

    const { getByRole } = render(
      <ProcessList gpus={gpus} now={0} actions={fakeActions()} trans={trans} />
    );

    const all = within(getByRole('table')).getAllByRole('row');
    expect(all[all.length - 1].textContent).toBe(
      '5744 more processes, holding less memory, are not shown.'
    );
  });
});

/**
 * A process of another user, on the model of one of the capture's, holding
 * `mib` of GPU memory: no kernel of this server, no name.
 */
function otherUsersProcess(
  model: IGpuProcess,
  pid: number,
  mib: number,
  user: string
): IGpuProcess {
  return {
    ...model,
    pid,
    used_memory_mib: mib,
    user,
    own: false,
    name: null,
    kernel_id: null,
    session_path: null
  };
}

/**
 * GPU 3 of the 8× V100S server as it reads once its fans fail: 91 °C, the
 * driver slowing it down (no capture has caught one doing so).
 */
function hotV100s(): IGpu {
  return {
    ...v100sX8Snapshot().gpus[3],
    temperature_c: 91,
    clock_throttle_reasons: ['hw_thermal_slowdown']
  };
}
