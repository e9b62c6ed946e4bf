import * as React from 'react';

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
