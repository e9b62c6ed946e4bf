import { fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';

import { KernelList } from '../components/KernelList';
import { IKernelSummary } from '../restapi/kernels';
import { fakeActions } from './panelActions';
import { a5000Kernels } from './payloads';
import { trans } from './trans';

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
    <KernelList kernels={kernels} actions={fakeActions()} trans={trans} />
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
      <KernelList kernels={kernels} actions={actions} trans={trans} />
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
