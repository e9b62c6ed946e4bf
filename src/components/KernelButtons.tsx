import { TranslationBundle } from '@jupyterlab/translation';
import { closeIcon, stopIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { IPanelActions } from './actions';

/**
 * The properties of {@link KernelButtons}.
 */
export namespace KernelButtons {
  /**
   * The properties of {@link KernelButtons}.
   */
  export interface IProps {
    /**
     * The kernel's id.
     */
    kernelId: string;
    /**
     * What the kernel serves, for a person: its notebook's name.
     */
    label: string;
    /**
     * What the buttons do.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * Interrupt and shut down one of this server's kernels; each asks for a
 * confirmation first.
 */
export function KernelButtons(props: KernelButtons.IProps): React.ReactElement {
  const { kernelId, label, actions, trans } = props;
  const buttons = [
    {
      name: trans.__('Interrupt the kernel of %1', label),
      icon: stopIcon,
      act: () => actions.interruptKernel(kernelId, label)
    },
    {
      name: trans.__('Shut down the kernel of %1', label),
      icon: closeIcon,
      act: () => actions.shutDownKernel(kernelId, label)
    }
  ];
  return (
    <span className="jp-GpuMonitor-kernelButtons">
      {buttons.map(({ name, icon, act }) => (
        <button
          key={name}
          type="button"
          className="jp-GpuMonitor-kernelButton"
          aria-label={name}
          title={name}
          onClick={act}
        >
          <icon.react tag="span" />
        </button>
      ))}
    </span>
  );
}
