import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IPanelActions } from './actions';

/**
 * The properties of {@link SessionLink}.
 */
export namespace SessionLink {
  /**
   * The properties of {@link SessionLink}.
   */
  export interface IProps {
    /**
     * The notebook's or console's path on the server.
     */
    path: string;
    /**
     * What a click does.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * A notebook's (or console's) file name that opens it; the path is its
 * title.
 */
export function SessionLink(props: SessionLink.IProps): React.ReactElement {
  const { path, actions, trans } = props;
  return (
    <a
      href="#"
      className="jp-GpuMonitor-sessionLink"
      title={trans.__('Open %1', path)}
      onClick={event => {
        event.preventDefault();
        actions.openPath(path);
      }}
    >
      {PathExt.basename(path)}
    </a>
  );
}
