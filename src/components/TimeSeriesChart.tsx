import * as React from 'react';
import uPlot from 'uplot';

import { chartTheme, IChartTheme } from '../gpu/charts';

/**
 * The properties of {@link TimeSeriesChart}.
 */
export namespace TimeSeriesChart {
  /**
   * The properties of {@link TimeSeriesChart}.
   */
  export interface IProps {
    /**
     * The chart's uPlot options, less its size, for the theme's colours; a
     * new function creates the chart anew.
     */
    options: (theme: IChartTheme) => Omit<uPlot.Options, 'width' | 'height'>;
    /**
     * The chart's data; a new array is drawn with `setData`.
     */
    data: uPlot.AlignedData;
    /**
     * The span of the x axis shown, in seconds since the epoch; null to
     * fit the data.
     */
    xRange: { min: number; max: number } | null;
    /**
     * Changes when the theme changes: the chart re-reads its colours.
     */
    themeRevision: number;
    /**
     * Called with the position of the reading under the cursor, null when
     * the cursor leaves the chart.
     */
    onCursor: (position: number | null) => void;
    /**
     * What the chart shows, for assistive technology.
     */
    label: string;
  }
}

/**
 * A uPlot time-series chart. It is created once (and again when its options
 * or the theme change), updated in place with `setData` and `setScale`,
 * resized with its container, and destroyed with the component.
 */
export function TimeSeriesChart(
  props: TimeSeriesChart.IProps
): React.ReactElement {
  const container = React.useRef<HTMLDivElement>(null);
  const plot = React.useRef<uPlot | null>(null);
  const latest = React.useRef(props);
  latest.current = props;
  const { options, themeRevision, data, xRange } = props;

  React.useEffect(() => {
    const element = container.current!;
    // Canvas colours cannot be CSS variables: read their values here.
    const style = getComputedStyle(element);
    const theme = chartTheme(
      name => style.getPropertyValue(name).trim(),
      `${style.fontSize} ${style.fontFamily}`
    );
    const base = options(theme);
    const chart = new uPlot(
      {
        ...base,
        width: element.clientWidth,
        height: element.clientHeight,
        hooks: {
          ...base.hooks,
          setCursor: [
            (self: uPlot) => latest.current.onCursor(self.cursor.idx ?? null)
          ]
        }
      },
      latest.current.data,
      element
    );
    Private.show(chart, latest.current.data, latest.current.xRange);
    plot.current = chart;
    const observer = new ResizeObserver(() => {
      chart.setSize({
        width: element.clientWidth,
        height: element.clientHeight
      });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, [options, themeRevision]);

  React.useEffect(() => {
    if (plot.current) {
      Private.show(plot.current, data, xRange);
    }
  }, [data, xRange?.min, xRange?.max]);

  return (
    <div
      ref={container}
      className="jp-GpuMonitor-chartCanvas"
      role="img"
      aria-label={props.label}
    />
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Draw the data over the x span, in one redraw.
   */
  export function show(
    chart: uPlot,
    data: uPlot.AlignedData,
    xRange: { min: number; max: number } | null
  ): void {
    chart.batch(() => {
      chart.setData(data, xRange === null);
      if (xRange !== null) {
        chart.setScale('x', xRange);
      }
    });
  }
}
