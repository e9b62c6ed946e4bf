import * as React from 'react';
import uPlot from 'uplot';
// uPlot's own styles load with the charts, not with JupyterLab.
import 'uplot/dist/uPlot.min.css';

import { ITimeSpan } from '../charts/chartKinds';
import {
  bandAt,
  bandExtents,
  chartTheme,
  IChartTheme,
  ITimeBand
} from '../charts/charts';
import { indexAt } from '../gpu/history';
import { ColumnThinning } from '../charts/thinning';

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
    xRange: ITimeSpan | null;
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
    /**
     * Spans of time shaded under the lines (cell runs); a new array is
     * drawn at once.
     */
    bands?: readonly ITimeBand[];
    /**
     * Called with the band under the cursor when it changes, null when the
     * cursor leaves it.
     */
    onBandHover?: (band: ITimeBand | null) => void;
    /**
     * Called with the band under the cursor when the chart is clicked (a
     * press and release in place).
     */
    onBandClick?: (band: ITimeBand) => void;
    /**
     * Called with the span of time dragged across; without it, a drag does
     * nothing.
     */
    onSelectSpan?: (span: ITimeSpan) => void;
  }
}

/**
 * A uPlot time-series chart. It is created once (and again when its options
 * or the theme change), updated in place with `setData` and `setScale` (the
 * readings thinned to two points a pixel column, `ColumnThinning`),
 * resized with its container, and destroyed with the component. Bands are
 * shaded under the lines; the one under the cursor is reported, and a click
 * on it; a drag across it reports the span dragged across.
 */
export function TimeSeriesChart(
  props: TimeSeriesChart.IProps
): React.ReactElement {
  const container = React.useRef<HTMLDivElement>(null);
  const plot = React.useRef<uPlot | null>(null);
  const hovered = React.useRef<ITimeBand | null>(null);
  // The readings thinned to the chart's width, and the points drawn.
  const thinning = React.useRef(new ColumnThinning());
  const drawn = React.useRef<uPlot.AlignedData | null>(null);
  const latest = React.useRef(props);
  latest.current = props;
  const { options, themeRevision, data, xRange, bands } = props;
  const selectable = props.onSelectSpan !== undefined;

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
        // A drag shades the span; what it shows then is the caller's.
        cursor: selectable
          ? { ...base.cursor, drag: { x: true, y: false, setScale: false } }
          : base.cursor,
        hooks: {
          ...base.hooks,
          setSelect: [
            (self: uPlot) => {
              const { left, width } = self.select;
              if (width < MIN_DRAG_PX) {
                return;
              }
              const min = self.posToVal(left, 'x');
              const max = self.posToVal(left + width, 'x');
              self.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              latest.current.onSelectSpan?.({ min, max });
            }
          ],
          drawClear: [
            (self: uPlot) =>
              Private.drawBands(
                self,
                latest.current.bands ?? [],
                theme.bandColor
              )
          ],
          setCursor: [
            (self: uPlot) => {
              latest.current.onCursor(
                Private.readingAt(
                  self.cursor.idx ?? null,
                  drawn.current,
                  latest.current.data
                )
              );
              const band = Private.bandUnderCursor(
                self,
                latest.current.bands ?? []
              );
              if (band !== hovered.current) {
                hovered.current = band;
                self.over.style.cursor = band ? 'pointer' : '';
                latest.current.onBandHover?.(band);
              }
            }
          ]
        }
      },
      latest.current.data,
      element
    );
    thinning.current = new ColumnThinning();
    const show = (): void => {
      drawn.current =
        Private.show(
          chart,
          thinning.current,
          latest.current.data,
          latest.current.xRange,
          element.clientWidth
        ) ?? drawn.current;
    };
    show();
    plot.current = chart;
    // A press and release in place, as uPlot tells a click from a drag: the
    // click event itself does not always reach the chart in JupyterLab.
    let pressed: { x: number; y: number } | null = null;
    const onPress = (event: MouseEvent): void => {
      pressed = { x: event.clientX, y: event.clientY };
    };
    const onRelease = (event: MouseEvent): void => {
      const inPlace =
        pressed !== null &&
        Math.abs(event.clientX - pressed.x) <= 3 &&
        Math.abs(event.clientY - pressed.y) <= 3;
      pressed = null;
      if (inPlace && hovered.current) {
        latest.current.onBandClick?.(hovered.current);
      }
    };
    chart.over.addEventListener('mousedown', onPress);
    chart.over.addEventListener('mouseup', onRelease);
    const observer = new ResizeObserver(() => {
      chart.setSize({
        width: element.clientWidth,
        height: element.clientHeight
      });
      show(); // as many points as the new width has columns
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.over.removeEventListener('mousedown', onPress);
      chart.over.removeEventListener('mouseup', onRelease);
      hovered.current = null;
      chart.destroy();
      plot.current = null;
    };
  }, [options, themeRevision, selectable]);

  React.useEffect(() => {
    if (plot.current) {
      drawn.current =
        Private.show(
          plot.current,
          thinning.current,
          data,
          xRange,
          container.current!.clientWidth
        ) ?? drawn.current;
    }
  }, [data, xRange?.min, xRange?.max]);

  React.useEffect(() => {
    plot.current?.redraw(false);
  }, [bands]);

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
 * The least drag that selects a span, in CSS pixels: less is a click.
 */
const MIN_DRAG_PX = 4;

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Draw the data over the x span, in one redraw, thinned to what a chart
   * `width` CSS pixels wide shows, unless a pixel of it would not change;
   * the points drawn, null when the last drawing stands.
   */
  export function show(
    chart: uPlot,
    thinning: ColumnThinning,
    data: uPlot.AlignedData,
    xRange: ITimeSpan | null,
    width: number
  ): uPlot.AlignedData | null {
    // A pixel of the y axis, in its unit (NaN before the first drawing).
    const pixel = Math.abs(chart.posToVal(0, 'y') - chart.posToVal(1, 'y'));
    const thinned = thinning.update(
      data,
      xRange,
      Math.ceil(width * devicePixelRatio),
      Number.isFinite(pixel) ? pixel : 0
    );
    if (thinned !== null) {
      chart.batch(() => {
        chart.setData(thinned, xRange === null);
        if (xRange !== null) {
          chart.setScale('x', xRange);
        }
      });
    }
    return thinned;
  }

  /**
   * The position in `data` of the reading of point `point` drawn.
   */
  export function readingAt(
    point: number | null,
    drawn: uPlot.AlignedData | null,
    data: uPlot.AlignedData
  ): number | null {
    if (point === null || drawn === null || drawn === data) {
      return point;
    }
    const time = drawn[0][point];
    return time === undefined ? null : indexAt(data[0] as number[], time);
  }

  /**
   * Shade the bands under the lines (at least 3 CSS pixels wide).
   */
  export function drawBands(
    chart: uPlot,
    bands: readonly ITimeBand[],
    color: string
  ): void {
    if (bands.length === 0) {
      return;
    }
    const { ctx, bbox } = chart;
    ctx.save();
    ctx.fillStyle = color;
    ctx.globalAlpha = 0.25;
    for (const { left, width } of bandExtents(
      bands,
      time => chart.valToPos(time, 'x', true),
      bbox,
      3 * devicePixelRatio
    )) {
      ctx.fillRect(left, bbox.top, width, bbox.height);
    }
    ctx.restore();
  }

  /**
   * The band under the cursor, give or take 3 pixels; null when none.
   */
  export function bandUnderCursor(
    chart: uPlot,
    bands: readonly ITimeBand[]
  ): ITimeBand | null {
    const left = chart.cursor.left;
    if (bands.length === 0 || left === undefined || left < 0) {
      return null;
    }
    const time = chart.posToVal(left, 'x');
    const tolerance = Math.abs(chart.posToVal(left + 3, 'x') - time);
    return bandAt(bands, time, tolerance);
  }
}
