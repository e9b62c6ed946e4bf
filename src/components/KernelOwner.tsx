import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { kernelLabel } from '../gpu/processes';
import { IPanelActions } from './actions';
import { KernelButtons } from './KernelButtons';
import { SessionLink } from './SessionLink';

/**
 * The properties of {@link KernelOwner}.
 */
export namespace KernelOwner {
  /**
   * The properties of {@link KernelOwner}.
   */
  export interface IProps {
    /**
     * The kernel's id.
     */
    kernelId: string;
    /**
     * The path of its notebook or console; null when it has no session.
     */
    path: string | null;
    /**
     * Whether to offer interrupting and shutting it down: only for this
     * server's own kernels.
     */
    withButtons: boolean;
    /**
     * Whether its buttons offer releasing the GPU memory torch caches in it.
     */
    canReleaseCache?: boolean;
    /**
     * What the link and the buttons do.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * A kernel as the panel's tables show it: its notebook's name that opens it
 * (or the kernel's short id), and its buttons.
 */
export function KernelOwner(props: KernelOwner.IProps): React.ReactElement {
  const { kernelId, path, withButtons, canReleaseCache, actions, trans } =
    props;
  return (
    <>
      {path ? (
        <SessionLink path={path} actions={actions} trans={trans} />
      ) : (
        <span>{kernelLabel(kernelId, null, trans)}</span>
      )}
      {withButtons && (
        <KernelButtons
          kernelId={kernelId}
          label={kernelLabel(kernelId, path, trans)}
          canReleaseCache={canReleaseCache}
          actions={actions}
          trans={trans}
        />
      )}
    </>
  );
}
