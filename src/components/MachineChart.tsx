import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { chartWindow, ITimeSpan, readingsIn } from '../charts/chartKinds';
import { IChartTheme } from '../charts/charts';
import {
  formatMachineReading,
  MachineChartKind,
  machineChartData,
  machineChartOptions,
  machineSeriesNames
} from '../charts/machineCharts';
import { IGpuTimeSeries } from '../tokens';
import { LegendTime } from './LegendTime';
import { TimeSeriesChart } from './TimeSeriesChart';

/**
 * The properties of {@link MachineChart}.
 */
export namespace MachineChart {
  /**
   * The properties of {@link MachineChart}.
   */
  export interface IProps {
    /**
     * Which chart.
     */
    kind: MachineChartKind;
    /**
     * The readings kept.
     */
    history: IGpuTimeSeries;
    /**
     * The latest limit of memory, in MiB (the container's, or the host's
     * memory); null when unknown.
     */
    memoryTotalMiB: number | null;
    /**
     * How far back the chart shows, in seconds.
     */
    windowSeconds: number;
    /**
     * The span of time shown instead of the last `windowSeconds`; none to
     * follow the readings.
     */
    span?: ITimeSpan | null;
    /**
     * Called with the span of time dragged across the chart; without it,
     * the chart does not zoom.
     */
    onZoom?: (span: ITimeSpan) => void;
    /**
     * Changes when the theme changes.
     */
    themeRevision: number;
    /**
     * Charts with the same key move their cursors together.
     */
    syncKey?: string;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * A chart of the machine beside the GPUs' charts: its title, the chart, and
 * a legend with each line's value under the cursor, or the latest.
 */
export function MachineChart(props: MachineChart.IProps): React.ReactElement {
  const { kind, history, memoryTotalMiB, syncKey, trans } = props;
  const [cursor, setCursor] = React.useState<number | null>(null);
  const options = React.useCallback(
    (theme: IChartTheme) =>
      machineChartOptions({ kind, theme, memoryTotalMiB, syncKey, trans }),
    [kind, memoryTotalMiB, syncKey, trans]
  );
  const data = React.useMemo(
    () => machineChartData(history, kind),
    [history, kind, history.revision]
  );
  const title = Private.title(kind, trans);
  const names = machineSeriesNames(kind, trans);
  const xRange = props.span ?? chartWindow(history, props.windowSeconds);
  const inView = xRange && readingsIn(history.timestamps, xRange);
  // Without a cursor, the legend tells the last reading shown.
  const position = cursor ?? inView?.last ?? history.timestamps.length - 1;
  return (
    <figure className="jp-GpuMonitor-chart" data-chart={`machine-${kind}`}>
      <figcaption className="jp-GpuMonitor-chartTitle">{title}</figcaption>
      <TimeSeriesChart
        options={options}
        data={data}
        xRange={xRange}
        themeRevision={props.themeRevision}
        onCursor={setCursor}
        label={trans.__('%1 of the machine', title)}
        onSelectSpan={props.onZoom}
      />
      <ul className="jp-GpuMonitor-legend">
        <LegendTime
          timestamp={cursor === null ? undefined : history.timestamps[cursor]}
          trans={trans}
        />
        {names.map((name, line) => {
          const value = (data[line + 1] as (number | null)[])[position] ?? null;
          return (
            <li key={name} className="jp-GpuMonitor-legendItem">
              {name}{' '}
              <span className="jp-GpuMonitor-legendValue">
                {value === null
                  ? '–'
                  : formatMachineReading(kind, value, trans)}
              </span>
            </li>
          );
        })}
      </ul>
    </figure>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The title of a chart, with its unit.
   */
  export function title(
    kind: MachineChartKind,
    trans: TranslationBundle
  ): string {
    const titles: { [K in MachineChartKind]: string } = {
      cpu: trans.__('CPU (%)'),
      memory: trans.__('Memory (GiB)'),
      throughput: trans.__('Disk and network')
    };
    return titles[kind];
  }
}
