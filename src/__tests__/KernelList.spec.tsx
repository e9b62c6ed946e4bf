import { fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';

import { KernelList } from '../components/KernelList';
import { IKernelSummary } from '../restapi/kernels';
import { fakeActions } from './panelActions';
import { a5000KernelSnapshot, a5000Kernels } from './payloads';
import { trans } from './trans';

/**
 * The time of the read the kernels were recorded after.
 */
const RECORDED = a5000KernelSnapshot().timestamp;

/**
 * The recorded kernels, `train.ipynb`'s (39676 MiB) and `idle.ipynb`'s (none),
 * in these execution states.
 */
function kernelsIn(trainState: string, idleState: string): IKernelSummary[] {
  const [train, idle] = a5000Kernels();
  return [
    { ...train, execution_state: trainState },
    { ...idle, execution_state: idleState }
  ];
}

/**
 * The names of the buttons of each kernel's row, in order.
 */
function buttonsByRow(kernels: IKernelSummary[]): string[][] {
  const { getByRole } = render(
    <KernelList
      kernels={kernels}
      now={RECORDED}
      actions={fakeActions()}
      trans={trans}
    />
  );
  const table = getByRole('table', { name: 'GPU memory of my kernels' });
  return within(table)
    .getAllByRole('row')
    .slice(1)
    .map(row =>
      within(row)
        .queryAllByRole('button')
        .map(button => button.getAttribute('aria-label')!)
    );
}

describe("KernelList's release of cached GPU memory", () => {
  it('is offered for an idle kernel that holds GPU memory, and not for one that holds none', () => {
    const [train, idle] = buttonsByRow(kernelsIn('idle', 'idle'));

    expect(train).toEqual([
      'Release the cached GPU memory of train.ipynb',
      'Interrupt the kernel of train.ipynb',
      'Shut down the kernel of train.ipynb'
    ]);
    expect(idle).toEqual([
      'Interrupt the kernel of idle.ipynb',
      'Shut down the kernel of idle.ipynb'
    ]);
  });

  it.each(['busy', 'starting', 'restarting'])(
    'is not offered while the kernel is %s',
    state => {
      const [train] = buttonsByRow(kernelsIn(state, 'idle'));
      expect(train).not.toContain(
        'Release the cached GPU memory of train.ipynb'
      );
    }
  );

  it('runs the release for that kernel', () => {
    const actions = fakeActions();
    const kernels = kernelsIn('idle', 'idle');
    const { getByRole } = render(
      <KernelList
        kernels={kernels}
        now={RECORDED}
        actions={actions}
        trans={trans}
      />
    );

    fireEvent.click(
      getByRole('button', {
        name: 'Release the cached GPU memory of train.ipynb'
      })
    );

    expect(actions.releaseCachedMemory).toHaveBeenCalledWith(
      kernels[0].kernel_id,
      'train.ipynb'
    );
    expect(actions.shutDownKernel).not.toHaveBeenCalled();
  });
});

describe("KernelList's idle-held line", () => {
  /**
   * The idle-held line of train.ipynb's row (the recorded kernel holding the
   * two A5000 at 0 %) `later` seconds after the recorded kernel went idle;
   * null when none.
   */
  function idleHeldLine(
    later: number,
    kernels = a5000Kernels()
  ): string | null {
    const since = a5000Kernels()[0].gpus[0].idle_held_since!;
    const { container } = render(
      <KernelList
        kernels={kernels}
        now={since + later}
        actions={fakeActions()}
        trans={trans}
      />
    );
    return (
      container.querySelector('.jp-GpuMonitor-idleHeld')?.textContent ?? null
    );
  }

  it('says how long the kernel has held its GPUs idle, and how much it holds there', () => {
    expect(idleHeldLine(2 * 3600 + 10 * 60)).toBe(
      'Idle 2 h 10 min, holding 38.7 GiB'
    );
  });

  it('says nothing in the minute after a cell ends, nor for a kernel in use', () => {
    expect(idleHeldLine(59)).toBeNull();
    const [train, idle] = a5000Kernels();
    const inUse = {
      ...train,
      gpus: train.gpus.map(gpu => ({ ...gpu, idle_held_since: null }))
    };
    expect(idleHeldLine(3600, [inUse, idle])).toBeNull();
  });

  it('counts only the GPUs it holds idle, from the earliest', () => {
    const [train, idle] = a5000Kernels();
    const since = train.gpus[0].idle_held_since!;
    const oneIdle = {
      ...train,
      gpus: [
        { ...train.gpus[0], idle_held_since: since - 600 },
        { ...train.gpus[1], idle_held_since: null }
      ]
    };
    // GPU 0's 22430 MiB, idle from 10 min before the recorded start.
    expect(idleHeldLine(60, [oneIdle, idle])).toBe(
      'Idle 11 min 0 s, holding 21.9 GiB'
    );
  });
});
