import * as React from 'react';

import { seriesStyle } from '../charts/charts';

/**
 * The properties of {@link SeriesSwatch}.
 */
export namespace SeriesSwatch {
  /**
   * The properties of {@link SeriesSwatch}.
   */
  export interface IProps {
    /**
     * The GPU whose line it stands for.
     */
    gpuIndex: number;
  }
}

/**
 * A short sample of a GPU's line in the charts: its theme colour and dash.
 */
export function SeriesSwatch(props: SeriesSwatch.IProps): React.ReactElement {
  const style = seriesStyle(props.gpuIndex);
  return (
    <span
      className="jp-GpuMonitor-swatch"
      aria-hidden="true"
      style={{
        borderTopColor: `var(${style.colorVariable})`,
        borderTopStyle: style.dash ? 'dashed' : 'solid'
      }}
    />
  );
}
