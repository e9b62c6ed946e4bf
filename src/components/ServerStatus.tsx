import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IServerStatus } from '../restapi/gpus';
import { MonitorMessage } from './MonitorMessage';

/**
 * The properties of {@link ServerStatus}.
 */
export namespace ServerStatus {
  /**
   * The properties of {@link ServerStatus}.
   */
  export interface IProps {
    /**
     * The status the server reported.
     */
    status: IServerStatus;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * How the server reads the GPUs and, when it cannot, why and what to do.
 */
export function ServerStatus(props: ServerStatus.IProps): React.ReactElement {
  const { status, trans } = props;
  const unknown = trans.__('unknown');
  return (
    <div className="jp-GpuMonitor-serverStatus">
      {status.error && <MonitorMessage problem={status.error} trans={trans} />}
      <dl className="jp-GpuMonitor-statusFacts">
        <dt>{trans.__('Source in use')}</dt>
        <dd>{status.source ?? trans.__('none')}</dd>
        <dt>{trans.__('Source setting')}</dt>
        <dd>{status.source_setting}</dd>
        <dt>{trans.__('Sampling interval')}</dt>
        <dd>{trans.__('%1 s', status.interval_seconds)}</dd>
        <dt>{trans.__('Driver version')}</dt>
        <dd>{status.driver_version ?? unknown}</dd>
        <dt>{trans.__('CUDA version')}</dt>
        <dd>{status.cuda_version ?? unknown}</dd>
        <dt>{trans.__('Server extension version')}</dt>
        <dd>{status.version}</dd>
      </dl>
    </div>
  );
}
