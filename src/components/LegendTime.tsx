import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { formatClockTime } from '../format/units';

/**
 * The properties of {@link LegendTime}.
 */
export namespace LegendTime {
  /**
   * The properties of {@link LegendTime}.
   */
  export interface IProps {
    /**
     * When the reading under the cursor was taken, in seconds since the
     * epoch; undefined when the cursor is off the chart.
     */
    timestamp: number | undefined;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The crosshair's moment in a chart's legend ("At 4:05:12 PM:"), whose
 * values the legend's other items show; nothing off the chart.
 */
export function LegendTime(
  props: LegendTime.IProps
): React.ReactElement | null {
  const { timestamp, trans } = props;
  if (timestamp === undefined) {
    return null;
  }
  return (
    <li className="jp-GpuMonitor-legendItem jp-GpuMonitor-legendTime">
      {trans.__('At %1:', formatClockTime(timestamp, true))}
    </li>
  );
}
