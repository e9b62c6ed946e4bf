import { TranslationBundle } from '@jupyterlab/translation';
import { cleaningIcon, closeIcon, stopIcon } from '@jupyterlab/ui-components';
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
     * Whether to offer releasing the GPU memory torch caches in it: an idle
     * kernel that holds GPU memory.
     */
    canReleaseCache?: boolean;
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
 * Interrupt and shut down one of this server's kernels, each after a
 * confirmation; and, where offered, release the GPU memory torch caches in
 * it, which loses nothing and so asks for none.
 */
export function KernelButtons(props: KernelButtons.IProps): React.ReactElement {
  const { kernelId, label, canReleaseCache, actions, trans } = props;
  const release = {
    name: trans.__('Release the cached GPU memory of %1', label),
    icon: cleaningIcon,
    act: () => actions.releaseCachedMemory(kernelId, label)
  };
  const buttons = [
    ...(canReleaseCache ? [release] : []),
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
