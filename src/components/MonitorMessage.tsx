import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IGpuSnapshot } from '../restapi/gpus';

/**
 * The properties of {@link MonitorMessage}.
 */
export namespace MonitorMessage {
  /**
   * The properties of {@link MonitorMessage}.
   */
  export interface IProps {
    /**
     * What happened.
     */
    message: string;
    /**
     * What to do about it.
     */
    hint: string;
  }
}

/**
 * Why the GPUs cannot be shown, and what to do about it.
 */
export function MonitorMessage(
  props: MonitorMessage.IProps
): React.ReactElement {
  return (
    <div className="jp-GpuMonitor-message" role="alert">
      <p className="jp-GpuMonitor-errorMessage">{props.message}</p>
      <p className="jp-GpuMonitor-errorHint">{props.hint}</p>
    </div>
  );
}

/**
 * The properties of {@link NoGpuMessage}.
 */
export namespace NoGpuMessage {
  /**
   * The properties of {@link NoGpuMessage}.
   */
  export interface IProps {
    /**
     * What the sources said: no NVML library, no nvidia-smi.
     */
    detail: string;
    /**
     * How to give the server a GPU's driver.
     */
    hint: string;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * A server without an NVIDIA driver (a laptop, a CPU server: the most
 * common first run) as the information it is, not as an error: what the
 * sources said and how to add a GPU folded away.
 */
export function NoGpuMessage(props: NoGpuMessage.IProps): React.ReactElement {
  const { trans } = props;
  return (
    <div className="jp-GpuMonitor-noGpu" role="status">
      <p className="jp-GpuMonitor-noGpuTitle">
        {trans.__('No NVIDIA GPU found on this server')}
      </p>
      <p>
        {trans.__(
          'The panel fills in by itself once the server has an NVIDIA GPU and its driver.'
        )}
      </p>
      <details>
        <summary>{trans.__('Details')}</summary>
        <p>{props.detail}</p>
        <p>{props.hint}</p>
      </details>
    </div>
  );
}

/**
 * What to show in place of the GPUs when a snapshot has none to show: no
 * NVIDIA driver as calm information, the server's error with its hint, or
 * that the server reports no GPU; null when it has GPUs.
 */
export function snapshotMessage(
  snapshot: IGpuSnapshot,
  trans: TranslationBundle
): React.ReactElement | null {
  // Neither NVML nor nvidia-smi here: a machine without an NVIDIA driver.
  // A Prometheus source without its URL is a setting to correct instead.
  if (
    snapshot.error?.kind === 'not_installed' &&
    snapshot.source !== 'prometheus'
  ) {
    return (
      <NoGpuMessage
        detail={snapshot.error.message}
        hint={snapshot.error.hint}
        trans={trans}
      />
    );
  }
  if (snapshot.error) {
    return (
      <MonitorMessage
        message={snapshot.error.message}
        hint={snapshot.error.hint}
      />
    );
  }
  if (snapshot.gpus.length === 0) {
    return (
      <p className="jp-GpuMonitor-empty">
        {trans.__('The server reports no GPU.')}
      </p>
    );
  }
  return null;
}
