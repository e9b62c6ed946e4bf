import { launchIcon } from '@jupyterlab/ui-components';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import {
  CHART_FIELDS,
  ChartKind,
  chartWindow,
  ITimeSpan,
  readingsIn
} from '../charts/chartKinds';
import {
  bandsIn,
  chartData,
  chartOptions,
  chartLimits,
  currentColumns,
  IChartTheme,
  ITimeBand
} from '../charts/charts';
import { formatReading } from '../format/units';
import { IGpuTimeSeries } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { LegendTime } from './LegendTime';
import { SeriesSwatch } from './SeriesSwatch';
import { TimeSeriesChart } from './TimeSeriesChart';

/**
 * The properties of {@link GpuChart}.
 */
export namespace GpuChart {
  /**
   * The properties of {@link GpuChart}.
   */
  export interface IProps {
    /**
     * The measurement charted.
     */
    kind: ChartKind;
    /**
     * The readings kept.
     */
    history: IGpuTimeSeries;
    /**
     * The latest snapshot: the GPUs drawn, their memory totals and power
     * limits.
     */
    snapshot: IGpuSnapshot;
    /**
     * How far back the chart shows, in seconds.
     */
    windowSeconds: number;
    /**
     * The span of time shown instead of the last `windowSeconds` (a zoom
     * into the past); none to follow the readings.
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
     * The current notebook's cell runs, shaded on the time axis.
     */
    bands: readonly ITimeBand[];
    /**
     * Called when a band is clicked.
     */
    onBandClick: (band: ITimeBand) => void;
    /**
     * The GPUs whose lines are hidden, by index; none by default.
     */
    hiddenGpus?: ReadonlySet<number>;
    /**
     * Called when a GPU of the legend is clicked, `solo` when with Shift
     * (show only that GPU); without it the legend only tells.
     */
    onToggleGpu?: (index: number, solo: boolean) => void;
    /**
     * Charts with the same key move their cursors together.
     */
    syncKey?: string;
    /**
     * Open the chart at full size (the dashboard's); none where it is.
     */
    onOpen?: () => void;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * One measurement of every GPU over time: a title, the chart with the
 * current notebook's cell runs shaded, and a legend with the values under
 * the cursor, or the latest ones, and the cell run under it.
 */
export function GpuChart(props: GpuChart.IProps): React.ReactElement {
  const { kind, history, snapshot, windowSeconds, themeRevision, trans } =
    props;
  const [cursor, setCursor] = React.useState<number | null>(null);
  const [band, setBand] = React.useState<ITimeBand | null>(null);
  const field = CHART_FIELDS[kind];
  const hidden = props.hiddenGpus;
  const all = currentColumns(history, snapshot);
  const gpus = hidden ? all.filter(gpu => !hidden.has(gpu.index)) : all;
  // The GPUs drawn, by identity: a new set makes new options and data.
  const gpuKey = gpus.map(gpu => gpu.uuid ?? gpu.index).join(',');
  const limits = chartLimits(kind, snapshot);
  const limitsKey = `${limits.ceiling}:${limits.lines.join(',')}`;
  const { syncKey } = props;
  const options = React.useCallback(
    (theme: IChartTheme) =>
      chartOptions({ kind, gpus, theme, limits, syncKey, trans }),
    [kind, gpuKey, limitsKey, syncKey, trans]
  );
  const data = React.useMemo(
    () => chartData(history, kind, gpus),
    [history, kind, history.revision, gpuKey]
  );
  const xRange = props.span ?? chartWindow(history, windowSeconds);
  const title = Private.title(kind, trans);
  const inView = xRange && readingsIn(history.timestamps, xRange);
  const shown = inView ? inView.last - inView.first + 1 : 0;
  // Without a cursor, the legend tells the last reading shown.
  const position = cursor ?? inView?.last ?? history.timestamps.length - 1;
  const runs = bandsIn(props.bands, xRange).length;
  const readings = trans._n(
    '%2 of each GPU: %1 reading',
    '%2 of each GPU: %1 readings',
    shown,
    title
  );
  return (
    <figure className="jp-GpuMonitor-chart" data-chart={kind}>
      <figcaption className="jp-GpuMonitor-chartTitle">
        {title}
        {props.onOpen && (
          <button
            type="button"
            className="jp-GpuMonitor-iconButton jp-GpuMonitor-chartOpen"
            aria-label={trans.__('Open %1 in the GPU Dashboard', title)}
            title={trans.__(
              'Open this chart at full size in the GPU Dashboard'
            )}
            onClick={props.onOpen}
          >
            <launchIcon.react tag="span" />
          </button>
        )}
      </figcaption>
      <TimeSeriesChart
        options={options}
        data={data}
        xRange={xRange}
        themeRevision={themeRevision}
        onCursor={setCursor}
        label={
          runs === 0
            ? readings
            : trans.__(
                '%1, %2',
                readings,
                trans._n('%1 cell run shaded', '%1 cell runs shaded', runs)
              )
        }
        bands={props.bands}
        onBandHover={setBand}
        onBandClick={props.onBandClick}
        onSelectSpan={props.onZoom}
      />
      <ul className="jp-GpuMonitor-legend">
        <LegendTime
          timestamp={cursor === null ? undefined : history.timestamps[cursor]}
          trans={trans}
        />
        {all.map(gpu => {
          const value = gpu.values[field][position] ?? null;
          const text = (
            <>
              <SeriesSwatch gpuIndex={gpu.index} />
              {trans.__('GPU %1', gpu.index)}{' '}
              <span className="jp-GpuMonitor-legendValue">
                {value === null ? '–' : formatReading(field, value, trans)}
              </span>
            </>
          );
          const shownNow = !hidden?.has(gpu.index);
          return (
            <li
              key={gpu.uuid ?? gpu.index}
              className={`jp-GpuMonitor-legendItem${shownNow ? '' : ' jp-mod-hidden'}`}
            >
              {props.onToggleGpu ? (
                <button
                  type="button"
                  className="jp-GpuMonitor-legendButton"
                  aria-pressed={shownNow}
                  title={trans.__(
                    'Click to show or hide GPU %1; Shift+click to show it alone',
                    gpu.index
                  )}
                  onClick={event =>
                    props.onToggleGpu!(gpu.index, event.shiftKey)
                  }
                >
                  {text}
                </button>
              ) : (
                text
              )}
            </li>
          );
        })}
        {limits.lines.length > 0 &&
          (kind === 'power' || kind === 'temperature') && (
            <li className="jp-GpuMonitor-legendItem jp-GpuMonitor-legendLimit">
              {Private.limitsText(
                kind,
                limits.lines.map(limit => formatReading(field, limit, trans)),
                trans
              )}
            </li>
          )}
        {band && (
          <li className="jp-GpuMonitor-legendItem jp-GpuMonitor-bandLabel">
            {trans.__('Cell %1', band.label)}
          </li>
        )}
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
  export function title(kind: ChartKind, trans: TranslationBundle): string {
    const titles: { [K in ChartKind]: string } = {
      utilization: trans.__('Utilization (%)'),
      memory: trans.__('Memory used (GiB)'),
      temperature: trans.__('Temperature (°C)'),
      power: trans.__('Power (W)'),
      pcie: trans.__('PCIe received'),
      nvlink: trans.__('NVLink received')
    };
    return titles[kind];
  }

  /**
   * What the dashed lines of a chart are, in its legend: "Limit 230 W",
   * "Slows down at 87 °C".
   */
  export function limitsText(
    kind: 'power' | 'temperature',
    limits: string[],
    trans: TranslationBundle
  ): string {
    const list = limits.join(', ');
    return kind === 'power'
      ? trans.__('Limit %1', list)
      : trans.__('Slows down at %1', list);
  }
}
