import { TranslationBundle } from '@jupyterlab/translation';
import type uPlot from 'uplot';

import { CHART_FIELDS, ChartKind } from './chartKinds';
import { IGpuColumns, IGpuTimeSeries } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { sameGpu } from '../gpu/history';
import { drawGaps } from './gapDrawing';
import { drawNearlyFull } from './nearlyFullChart';
import { drawOverlaps } from './overlapDrawing';
import { formatClockTime, formatReading, MIB_PER_GIB } from '../format/units';

/**
 * The CSS variables GPU lines are drawn in, GPU 0 first (style/base.css
 * gives each theme eight that tell apart on its background): an 8-GPU
 * server's lines each have a colour of their own; past 8 the colours repeat
 * dashed, then dotted. JupyterLab's five theme colours made GPUs 5 to 7
 * dashed copies of 0 to 2, and GPU 1 the warning colour.
 */
export const SERIES_COLOR_VARIABLES: readonly string[] = Array.from(
  { length: 8 },
  (_, index) => `--jp-gpu-monitor-series-${index}`
);

/**
 * How wide the lines are drawn, in CSS pixels.
 */
const SERIES_WIDTH = 1.5;

/**
 * The dash patterns of the lines, in CSS pixels: solid, dashed, dotted.
 */
const SERIES_DASHES: readonly (number[] | null)[] = [null, [6, 3], [2, 2]];

/**
 * How a GPU's line is drawn.
 */
export interface ISeriesStyle {
  /**
   * The theme variable of its colour.
   */
  colorVariable: string;
  /**
   * Its dash pattern; null when solid.
   */
  dash: number[] | null;
}

/**
 * How the line of the GPU with this index is drawn, the same in every chart.
 */
export function seriesStyle(gpuIndex: number): ISeriesStyle {
  const colors = SERIES_COLOR_VARIABLES.length;
  return {
    colorVariable: SERIES_COLOR_VARIABLES[gpuIndex % colors],
    dash: SERIES_DASHES[Math.floor(gpuIndex / colors) % SERIES_DASHES.length]
  };
}

/**
 * The colours and font of the charts, as the theme sets them.
 */
export interface IChartTheme {
  /**
   * The value of each of {@link SERIES_COLOR_VARIABLES}.
   */
  seriesColors: string[];
  /**
   * The colour of the axes' labels.
   */
  axisColor: string;
  /**
   * The colour of the grid and ticks.
   */
  gridColor: string;
  /**
   * The CSS font of the axes' labels.
   */
  font: string;
  /**
   * The colour of the bands that shade cell runs.
   */
  bandColor: string;
  /**
   * The warning colour: what is nearly out of memory.
   */
  warnColor: string;
}

/**
 * The chart theme from the values of the `--jp-*` variables.
 *
 * @param readVariable - the value of a CSS variable where the chart is
 * @param font - the CSS font where the chart is
 */
export function chartTheme(
  readVariable: (name: string) => string,
  font: string
): IChartTheme {
  return {
    seriesColors: SERIES_COLOR_VARIABLES.map(readVariable),
    axisColor: readVariable('--jp-ui-font-color2'),
    gridColor: readVariable('--jp-border-color2'),
    font,
    bandColor: readVariable('--jp-brand-color2'),
    warnColor: readVariable('--jp-warn-color1')
  };
}

/**
 * A GPU drawn in a chart.
 */
export interface IChartGpu {
  /**
   * The GPU index.
   */
  index: number;
}

/**
 * What a chart's options are built from.
 */
export interface IChartOptionsSource {
  /**
   * The chart.
   */
  kind: ChartKind;
  /**
   * The GPUs drawn, in the order of the history's columns.
   */
  gpus: readonly IChartGpu[];
  /**
   * The theme's colours and font.
   */
  theme: IChartTheme;
  /**
   * What bounds the y axis: see {@link chartLimits}.
   */
  limits: IChartLimits;
  /**
   * Charts with the same key move their cursors together (the dashboard's
   * crosshair across charts); none by default.
   */
  syncKey?: string;
  /**
   * The translation bundle of the extension's domain.
   */
  trans: TranslationBundle;
}

/**
 * A time chart, apart from what its uPlot options share with every other:
 * its lines, its y axis and what it draws over them.
 */
export interface ITimeChart {
  /**
   * The theme's colours and font.
   */
  theme: IChartTheme;
  /**
   * Its lines, in the order of the data's columns after the time: each
   * with its name, the theme colour of its index and its dash.
   */
  series: { label: string; colorIndex: number; dash: number[] | null }[];
  /**
   * The span of the y axis for the readings shown.
   */
  yRange: (min: number | null, max: number | null) => [number, number];
  /**
   * What the y axis adds to the shared axis: its steps and labels.
   */
  yAxis?: Partial<uPlot.Axis>;
  /**
   * What it draws over its lines (limits).
   */
  draw?: (plot: uPlot) => void;
  /**
   * What a gap in the readings is labelled: "no readings".
   */
  gapLabel: string;
  /**
   * Charts with the same key move their cursors together.
   */
  syncKey?: string;
}

/**
 * The uPlot options of a time chart, less its size: the legend drawn
 * outside uPlot, the time axis in the reader's clock, the theme's colours.
 */
export function timeChartOptions(
  chart: ITimeChart
): Omit<uPlot.Options, 'width' | 'height'> {
  const { theme } = chart;
  const axis = {
    stroke: theme.axisColor,
    font: theme.font,
    grid: { stroke: theme.gridColor, width: 1 },
    ticks: { stroke: theme.gridColor, width: 1 }
  };
  const colors = theme.seriesColors;
  return {
    legend: { show: false },
    cursor: {
      drag: { x: false, y: false },
      ...(chart.syncKey ? { sync: { key: chart.syncKey } } : {})
    },
    scales: {
      x: { time: true },
      y: { range: (plot, min, max) => roomBelowZero(chart.yRange(min, max)) }
    },
    hooks: {
      draw: [
        (plot: uPlot) => drawGaps(plot, theme, chart.gapLabel),
        ...(chart.draw ? [chart.draw] : [])
      ]
    },
    axes: [
      {
        ...axis,
        // uPlot's own tick labels are English ("1:05pm"); a tick less than
        // a minute from the next shows its seconds. Every tick shows its
        // whole time ("1:05:30 PM"), so ticks a few seconds apart get more
        // room than uPlot gives them.
        space: (plot: uPlot, axisIndex: number, min: number, max: number) =>
          max - min <= 120 ? 80 : 55,
        // The tick, the gap and one line of the font: uPlot's 50 px took
        // half of a side panel's chart.
        size: timeAxisSize(theme.font),
        values: (plot: uPlot, splits: number[], axisIndex, space, increment) =>
          splits.map(seconds => formatClockTime(seconds, increment < 60))
      },
      {
        ...axis,
        size: fitAxisSize(theme.font),
        incrs: WHOLE_STEPS,
        ...chart.yAxis
      }
    ],
    series: [
      {},
      ...chart.series.map(line => ({
        label: line.label,
        stroke: colors[line.colorIndex % colors.length],
        width: SERIES_WIDTH,
        points: { show: false },
        ...(line.dash ? { dash: line.dash } : {})
      }))
    ]
  };
}

/**
 * The uPlot options of a GPU chart, less its size: one line per GPU;
 * memory is drawn in MiB, as it is kept, with GiB on the axis.
 */
export function chartOptions(
  source: IChartOptionsSource
): Omit<uPlot.Options, 'width' | 'height'> {
  const { kind, gpus, theme, limits, trans } = source;
  return timeChartOptions({
    theme,
    gapLabel: trans.__('no readings'),
    syncKey: source.syncKey,
    yRange: (min, max) => yRange(kind, min, max, limits),
    draw: plot => {
      drawOverlaps(
        plot,
        gpus.map(
          gpu => theme.seriesColors[gpu.index % theme.seriesColors.length]
        ),
        SERIES_WIDTH
      );
      drawLimitLines(plot, limits.lines, theme, value =>
        formatReading(CHART_FIELDS[kind], value, trans)
      );
      if (kind === 'memory') {
        drawNearlyFull(
          plot,
          gpus.map(gpu => ({
            totalMiB: limits.memoryTotals.get(gpu.index) ?? null,
            color:
              theme.seriesColors[gpu.index % theme.seriesColors.length] ?? ''
          })),
          theme
        );
      }
    },
    yAxis:
      kind === 'memory'
        ? gibAxis()
        : kind === 'pcie' || kind === 'nvlink'
          ? rateAxis(trans)
          : {},
    series: gpus.map(gpu => ({
      label: trans.__('GPU %1', gpu.index),
      colorIndex: gpu.index,
      dash: seriesStyle(gpu.index).dash
    }))
  });
}

/**
 * A y axis of MiB readings labelled in GiB, in steps of whole GiB.
 */
export function gibAxis(): Partial<uPlot.Axis> {
  return {
    incrs: MEMORY_AXIS_GIB.map(gib => gib * MIB_PER_GIB),
    values: (plot: uPlot, splits: number[]) =>
      splits.map(mib => `${mib / MIB_PER_GIB}`)
  };
}

/**
 * A y axis of bytes per second: every tick in the one unit its largest
 * needs ("0.5 GB/s", "1.0 GB/s", not "500 MB/s" beside "1.0 GB/s"), with the
 * decimals its step needs.
 */
export function rateAxis(trans: TranslationBundle): Partial<uPlot.Axis> {
  return {
    // 1, 2, 5 of each power of ten, from 1 B/s to 500 GB/s.
    incrs: Private.RATE_STEPS,
    values: (
      plot: uPlot,
      splits: number[],
      axisIndex: number,
      space: number,
      increment: number
    ) => rateTicks(splits, increment, trans)
  };
}

/**
 * The labels of a throughput axis's ticks, in one unit.
 */
export function rateTicks(
  splits: readonly number[],
  increment: number,
  trans: TranslationBundle
): string[] {
  const top = Math.max(0, ...splits.map(Math.abs));
  const [unit, label] =
    top >= 1e9
      ? [1e9, (value: string) => trans.__('%1 GB/s', value)]
      : top >= 1e6
        ? [1e6, (value: string) => trans.__('%1 MB/s', value)]
        : top >= 1e3
          ? [1e3, (value: string) => trans.__('%1 kB/s', value)]
          : [1, (value: string) => trans.__('%1 B/s', value)];
  const decimals = Math.min(
    2,
    Math.max(0, -Math.floor(Math.log10(increment / unit) + 1e-9))
  );
  return splits.map(value => label((value / unit).toFixed(decimals)));
}

/**
 * The steps of an axis of whole readings (°C, W, %): uPlot's own include
 * halves, which drew "57.5" between degrees.
 */
const WHOLE_STEPS = [
  1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000
];

/**
 * The width of a y axis: its widest tick label in the axis's font, and the
 * tick and gap beside it; a fixed width cut "1000" to "000" and "1.5 GB/s" to
 * ".5 GB/s".
 */
export function fitAxisSize(font: string) {
  return (plot: uPlot, values: string[] | null): number => {
    if (!values || values.length === 0) {
      return Private.MIN_AXIS_SIZE;
    }
    const { ctx } = plot;
    ctx.save();
    // The CSS font: measured in CSS pixels whatever the canvas's scale.
    ctx.font = font;
    const widest = Math.max(
      ...values.map(value => ctx.measureText(value).width)
    );
    ctx.restore();
    return Math.max(
      Private.MIN_AXIS_SIZE,
      Math.ceil(widest) + Private.AXIS_TICK_AND_GAP
    );
  };
}

/**
 * A y span from 0 begun a little below it: a line at 0 (an idle GPU) lies
 * on the plot's edge otherwise, half of it cut off; the lowest tick stays 0.
 */
export function roomBelowZero([low, high]: [number, number]): [number, number] {
  return low === 0 ? [-(high * BASELINE_ROOM), high] : [low, high];
}

/**
 * How far below 0 a y span from 0 begins, as a part of its height.
 */
const BASELINE_ROOM = 0.03;

/**
 * The height of a time axis: its tick and gap (15 px, uPlot's) and one line
 * of its labels' font.
 */
export function timeAxisSize(font: string): number {
  const fontPx = Number(/([\d.]+)px/.exec(font)?.[1] ?? 12);
  return 15 + Math.ceil(fontPx * 1.3);
}

/**
 * The steps of the memory axis, in GiB.
 */
const MEMORY_AXIS_GIB = [0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/**
 * What bounds a chart's y axis, from the snapshot.
 */
export interface IChartLimits {
  /**
   * The least top of the axis: 100 for percent, the largest memory total
   * (how full the cards are is the point); null where the axis fits the
   * readings.
   */
  ceiling: number | null;
  /**
   * The limits drawn as lines: each power limit and slowdown temperature
   * (where the board throttles) and each card's memory total (how close to
   * out of memory).
   */
  lines: number[];
  /**
   * Each GPU's memory in MiB, by index, on a memory chart (where nearly full
   * is marked); empty on the others.
   */
  memoryTotals: ReadonlyMap<number, number>;
}

/**
 * What bounds a chart's y axis, from the snapshot's GPUs.
 */
export function chartLimits(
  kind: ChartKind,
  snapshot: IGpuSnapshot | null
): IChartLimits {
  const distinct = (values: (number | null)[]): number[] =>
    [
      ...new Set(values.filter((value): value is number => value !== null))
    ].sort((a, b) => a - b);
  const gpus = snapshot?.gpus ?? [];
  switch (kind) {
    case 'utilization':
      return { ceiling: 100, lines: [], memoryTotals: new Map() };
    case 'memory': {
      const totals = distinct(gpus.map(gpu => gpu.memory_total_mib));
      return {
        ceiling: totals.length === 0 ? null : totals[totals.length - 1],
        lines: totals,
        memoryTotals: new Map(
          gpus
            .filter(gpu => gpu.memory_total_mib !== null)
            .map(gpu => [gpu.index, gpu.memory_total_mib!])
        )
      };
    }
    case 'temperature':
      return {
        ceiling: null,
        lines: distinct(gpus.map(gpu => gpu.temperature_slowdown_c)),
        memoryTotals: new Map()
      };
    case 'power':
      return {
        ceiling: null,
        lines: distinct(gpus.map(gpu => gpu.power_limit_w)),
        memoryTotals: new Map()
      };
    case 'pcie':
    case 'nvlink':
      return { ceiling: null, lines: [], memoryTotals: new Map() };
  }
}

/**
 * The span of a chart's y axis for the readings shown (`min` to `max`,
 * null when there is none): utilisation 0–100 %, memory from 0 to the
 * largest card; temperature and power fit their readings, so that 13–15 °C
 * or 6–14 W do not lie flat on the baseline, and reach a slowdown
 * temperature or power limit when the readings come near it (a limit far
 * above them is told by the legend).
 */
export function yRange(
  kind: ChartKind,
  min: number | null,
  max: number | null,
  limits: IChartLimits
): [number, number] {
  const low = min ?? 0;
  const high = max ?? limits.ceiling ?? 1;
  switch (kind) {
    case 'utilization':
    case 'memory':
      return [0, Math.max(limits.ceiling ?? 0, high, 1)];
    case 'temperature':
      return [
        Math.max(0, Math.floor((low - 5) / 5) * 5),
        Private.reaching(Math.ceil((high + 5) / 5) * 5, limits.lines, 5)
      ];
    case 'power': {
      const pad = Math.max(5, (high - low) * 0.2);
      return [
        Math.max(0, Math.floor((low - pad) / 10) * 10),
        Private.reaching(Math.ceil((high + pad) / 10) * 10, limits.lines, 10)
      ];
    }
    case 'pcie':
    case 'nvlink':
      // From 0, to a little above the readings: an idle bus reads a few kB/s.
      return [0, Math.max(1e6, high * 1.1)];
  }
}

/**
 * Draw each limit inside the y axis's span as a dashed line, labelled at
 * its right end ("230 W").
 */
export function drawLimitLines(
  plot: uPlot,
  lines: readonly number[],
  theme: IChartTheme,
  label: (value: number) => string
): void {
  const { ctx, bbox } = plot;
  const [low, high] = [plot.scales.y.min ?? 0, plot.scales.y.max ?? 0];
  const shown = lines.filter(value => value >= low && value <= high);
  if (shown.length === 0) {
    return;
  }
  ctx.save();
  ctx.strokeStyle = theme.axisColor;
  ctx.fillStyle = theme.axisColor;
  // The canvas counts device pixels; the theme's font is in CSS pixels.
  ctx.font = theme.font.replace(
    /([\d.]+)px/,
    (_, size) => `${Number(size) * devicePixelRatio}px`
  );
  ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
  ctx.lineWidth = devicePixelRatio;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'bottom';
  for (const value of shown) {
    const y = Math.round(plot.valToPos(value, 'y', true));
    ctx.beginPath();
    ctx.moveTo(bbox.left, y);
    ctx.lineTo(bbox.left + bbox.width, y);
    ctx.stroke();
    ctx.fillText(label(value), bbox.left + bbox.width - 2, y - 2);
  }
  ctx.restore();
}

/**
 * The charts of measurements that at least one of the snapshot's GPUs
 * reports, in order: a board without a power sensor, or a GPU under MIG
 * (no utilisation), gets no empty chart.
 */
export function reportedCharts(
  kinds: readonly ChartKind[],
  snapshot: IGpuSnapshot
): ChartKind[] {
  return kinds.filter(kind =>
    snapshot.gpus.some(gpu => gpu[CHART_FIELDS[kind]] !== null)
  );
}

/**
 * The charts of measurements that the history holds a reading of for one
 * of the snapshot's GPUs: a rate measured between two reads (PCIe, NVLink)
 * is null at a first read and after a counter reset, and its chart must not
 * come and go with it.
 */
export function recordedCharts(
  kinds: readonly ChartKind[],
  history: IGpuTimeSeries,
  snapshot: IGpuSnapshot
): ChartKind[] {
  const columns = currentColumns(history, snapshot);
  return kinds.filter(kind =>
    columns.some(gpu => gpu.values[CHART_FIELDS[kind]].some(v => v !== null))
  );
}

/**
 * The columns of the GPUs a snapshot reports, in the history's order: a GPU
 * that is gone (replaced, or another capture) keeps its readings in the
 * history, for the CSV export, but is not drawn.
 */
export function currentColumns(
  history: IGpuTimeSeries,
  snapshot: IGpuSnapshot
): readonly IGpuColumns[] {
  return history.gpus.filter(column =>
    snapshot.gpus.some(gpu => sameGpu(gpu, column))
  );
}

/**
 * A chart's data: the history's own columns, not copies. uPlot only reads
 * them, so appending a reading costs nothing here however long they are.
 *
 * @param columns - the GPUs drawn; all of the history's by default
 */
export function chartData(
  history: IGpuTimeSeries,
  kind: ChartKind,
  columns: readonly IGpuColumns[] = history.gpus
): uPlot.AlignedData {
  const field = CHART_FIELDS[kind];
  return [
    history.timestamps,
    ...columns.map(gpu => gpu.values[field])
  ] as uPlot.AlignedData;
}

/**
 * A span of time shaded on the charts: a cell's run.
 */
export interface ITimeBand {
  /**
   * What it stands for: the cell's id.
   */
  key: string;
  /**
   * Its start, in seconds since the epoch.
   */
  start: number;
  /**
   * Its end, in seconds since the epoch.
   */
  end: number;
  /**
   * Its name, for a person: "[5] model.fit(train)".
   */
  label: string;
}

/**
 * The band at a time, give or take `toleranceSeconds` (a band a few pixels
 * wide must be easy to point at); the latest when several are. Null when
 * there is none.
 */
export function bandAt(
  bands: readonly ITimeBand[],
  time: number,
  toleranceSeconds: number
): ITimeBand | null {
  for (let i = bands.length - 1; i >= 0; i--) {
    const band = bands[i];
    if (
      band.start - toleranceSeconds <= time &&
      time <= band.end + toleranceSeconds
    ) {
      return band;
    }
  }
  return null;
}

/**
 * Where the bands are drawn, in canvas pixels: clipped to the plotting
 * area, at least `minWidth` wide so that a short run shows, and none for a
 * band outside it.
 *
 * @param toPixel - the canvas x of a time
 * @param area - the plotting area's left edge and width, in canvas pixels
 */
export function bandExtents(
  bands: readonly ITimeBand[],
  toPixel: (time: number) => number,
  area: { left: number; width: number },
  minWidth: number
): { left: number; width: number }[] {
  const right = area.left + area.width;
  const extents = [];
  for (const band of bands) {
    const start = toPixel(band.start);
    const end = Math.max(toPixel(band.end), start + minWidth);
    if (end < area.left || start > right) {
      continue;
    }
    const left = Math.max(start, area.left);
    extents.push({ left, width: Math.min(end, right) - left });
  }
  return extents;
}

/**
 * The bands whose time overlaps a window.
 */
export function bandsIn(
  bands: readonly ITimeBand[],
  window: { min: number; max: number } | null
): ITimeBand[] {
  return window === null
    ? []
    : bands.filter(band => band.end >= window.min && band.start <= window.max);
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The narrowest y axis, in CSS pixels: room for half of the first time
   * label under the chart, which uPlot centres on its tick (a 28 px axis cut
   * "6:08:00 PM" to ":08:00 PM").
   */
  export const MIN_AXIS_SIZE = 40;

  /**
   * The steps of a throughput axis: 1, 2, 5 of each power of ten, from 1 B/s
   * to 500 GB/s.
   */
  export const RATE_STEPS = Array.from({ length: 36 }, (_, at) => {
    const power = Math.floor(at / 3);
    return [1, 2, 5][at % 3] * 10 ** power;
  });

  /**
   * What a y axis adds to its widest label, in CSS pixels: uPlot's tick
   * (10) and gap (5), and a pixel of air.
   */
  export const AXIS_TICK_AND_GAP = 16;

  /**
   * The top of an axis raised to each limit a little above it (a quarter
   * of the axis at most), with room over it: readings near a limit show how
   * near. A limit far above stays out of the axis.
   */
  export function reaching(
    top: number,
    limits: readonly number[],
    step: number
  ): number {
    for (const limit of limits) {
      if (limit <= top * 1.25) {
        top = Math.max(top, Math.ceil((limit * 1.05) / step) * step);
      }
    }
    return top;
  }
}
