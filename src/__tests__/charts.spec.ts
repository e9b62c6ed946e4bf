/**
 * @jest-environment node
 */
import type uPlot from 'uplot';

import {
  CHART_KINDS,
  ChartKind,
  chartWindow,
  LINK_CHART_KINDS
} from '../charts/chartKinds';
import {
  bandAt,
  bandExtents,
  bandsIn,
  chartData,
  chartOptions,
  chartTheme,
  chartLimits,
  currentColumns,
  IChartLimits,
  IChartTheme,
  reportedCharts,
  SERIES_COLOR_VARIABLES,
  roomBelowZero,
  seriesStyle,
  yRange
} from '../charts/charts';
import { GpuHistoryBuffer } from '../gpu/history';
import { machineChartOptions } from '../charts/machineCharts';
import {
  a100MigSnapshot,
  a5000History,
  a5000Snapshot,
  repeatedHistory,
  v100sX8Snapshot
} from './payloads';
import { trans } from './trans';

const THEME: IChartTheme = chartTheme(
  name => `value of ${name}`,
  '11px system-ui'
);

describe('chartData', () => {
  it("hands uPlot the history's own columns, not copies", () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append(a5000History());

    const data = chartData(buffer, 'memory');

    expect(data).toHaveLength(3);
    expect(data[0]).toBe(buffer.timestamps);
    expect(data[1]).toBe(buffer.gpus[0].values.memory_used_mib);
    expect(data[2]).toBe(buffer.gpus[1].values.memory_used_mib);
    expect(chartData(buffer, 'power')[2]).toBe(
      buffer.gpus[1].values.power_draw_w
    );
  });

  it('keeps null, which uPlot draws as a gap, where no reading was taken', () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append(a5000History());

    const utilization = chartData(buffer, 'utilization')[1] as (
      number | null
    )[];

    expect(utilization.filter(value => value === null)).toHaveLength(1);
    expect(utilization.some(value => Number.isNaN(value))).toBe(false);
  });
});

describe('chartWindow', () => {
  it('shows the last window of readings by setting the x scale', () => {
    const buffer = new GpuHistoryBuffer();
    expect(chartWindow(buffer, 60)).toBeNull();

    buffer.append(repeatedHistory(1000, 600));

    expect(chartWindow(buffer, 300)).toEqual({ min: 1599 - 300, max: 1599 });
  });
});

describe('chartOptions', () => {
  /**
   * The options of a chart of the two GPUs, in the test theme.
   */
  const optionsOf = (kind: ChartKind, limits: IChartLimits) =>
    chartOptions({
      kind,
      gpus: [{ index: 0 }, { index: 1 }],
      theme: THEME,
      limits,
      trans
    });

  it('draws one line per GPU in the theme colours, labelled with its index', () => {
    const options = optionsOf('utilization', {
      ceiling: 100,
      lines: [],
      memoryTotals: new Map()
    });

    const series = options.series.slice(1);
    expect(series.map(line => line.label)).toEqual(['GPU 0', 'GPU 1']);
    expect(series.map(line => line.stroke)).toEqual([
      'value of --jp-gpu-monitor-series-0',
      'value of --jp-gpu-monitor-series-1'
    ]);
    expect(options.legend?.show).toBe(false);
    expect(options.axes?.[0].stroke).toBe('value of --jp-ui-font-color2');
    expect(options.axes?.[1].grid?.stroke).toBe('value of --jp-border-color2');
    expect(options.axes?.[1].font).toBe('11px system-ui');
  });

  it('fits the y axis of power to the readings, not to a limit far above them', () => {
    const options = optionsOf('power', chartLimits('power', a5000Snapshot()));
    const range = options.scales?.y.range as uPlot.Range.Function;

    // The capture's 6.5 W and 13.6 W under a 230 W limit.
    // From a little below 0, where an idle line is drawn whole.
    expect(range({} as uPlot, 6.52, 13.59, 'y')).toEqual([-0.6, 20]);
    expect(range({} as uPlot, 190, 220, 'y')).toEqual([180, 250]);
  });

  it('labels the memory axis in GiB at steps that are whole GiB', () => {
    const options = optionsOf('memory', {
      ceiling: 24564,
      lines: [],
      memoryTotals: new Map()
    });
    const axis = options.axes![1];
    const values = axis.values as (plot: uPlot, splits: number[]) => string[];

    expect(values({} as uPlot, [0, 8192, 16384, 24576])).toEqual([
      '0',
      '8',
      '16',
      '24'
    ]);
    expect(axis.incrs).toContain(8 * 1024);
  });

  it('builds the options of every chart', () => {
    for (const kind of CHART_KINDS) {
      const options = optionsOf(kind, {
        ceiling: null,
        lines: [],
        memoryTotals: new Map()
      });
      expect(options.series).toHaveLength(3);
    }
  });
});

describe('seriesStyle', () => {
  it('gives each of 8 GPUs a colour of its own, solid, the same in every chart, and dashes past 8', () => {
    const colors = SERIES_COLOR_VARIABLES.length;
    const eight = [0, 1, 2, 3, 4, 5, 6, 7].map(seriesStyle);
    expect(new Set(eight.map(style => style.colorVariable)).size).toBe(8);
    expect(eight.every(style => style.dash === null)).toBe(true);
    expect(seriesStyle(0)).toEqual({
      colorVariable: '--jp-gpu-monitor-series-0',
      dash: null
    });
    expect(seriesStyle(colors).colorVariable).toBe('--jp-gpu-monitor-series-0');
    expect(seriesStyle(colors).dash).not.toBeNull();
    expect(seriesStyle(2 * colors).dash).not.toEqual(seriesStyle(colors).dash);
  });
});

describe('chartLimits and yRange', () => {
  it("tops utilization at 100 % and memory at the largest card, with a line at each card's total", () => {
    const snapshot = a5000Snapshot();
    expect(chartLimits('utilization', snapshot)).toEqual({
      ceiling: 100,
      lines: [],
      memoryTotals: new Map()
    });
    expect(chartLimits('memory', snapshot)).toEqual({
      ceiling: 24564,
      lines: [24564],
      memoryTotals: new Map([
        [0, 24564],
        [1, 24564]
      ])
    });
    expect(chartLimits('memory', a100MigSnapshot()).ceiling).toBe(81920);
    const mixed = {
      ...snapshot,
      gpus: [snapshot.gpus[0], { ...snapshot.gpus[1], memory_total_mib: 8192 }]
    };
    expect(chartLimits('memory', mixed)).toMatchObject({
      ceiling: 24564,
      lines: [8192, 24564]
    });
    expect(yRange('memory', 0, 22437, chartLimits('memory', snapshot))).toEqual(
      [0, 24564]
    );
    expect(
      yRange('utilization', 0, 0, chartLimits('utilization', null))
    ).toEqual([0, 100]);
  });

  it('begins a span from 0 a little below it, so that an idle line is drawn whole', () => {
    const span = yRange('utilization', 0, 0, chartLimits('utilization', null));

    expect(roomBelowZero(span)).toEqual([-3, 100]);
    expect(roomBelowZero([50, 75])).toEqual([50, 75]);
  });

  it('fits temperature to the readings: 13–15 °C of the idle A5000s are not flat on a 0–100 axis', () => {
    const limits = chartLimits('temperature', a5000Snapshot());
    // Both A5000 slow down from 95 °C: one line, far above idle readings.
    expect(limits).toMatchObject({ ceiling: null, lines: [95] });
    expect(yRange('temperature', 13, 15, limits)).toEqual([5, 20]);
    expect(yRange('temperature', 57, 66, limits)).toEqual([50, 75]);
    expect(yRange('temperature', 2, 3, limits)).toEqual([0, 10]);
    expect(
      yRange('temperature', 2, 3, chartLimits('temperature', null))
    ).toEqual([0, 10]);
  });

  it('draws each slowdown temperature, and reaches it when the readings come near it', () => {
    const v100s = chartLimits('temperature', v100sX8Snapshot());
    expect(v100s).toMatchObject({ ceiling: null, lines: [87] });
    // The capture's V100S run at 57–66 °C under load: the 87 °C line is in
    // view, with how far below it they run.
    expect(yRange('temperature', 57, 66, v100s)).toEqual([50, 95]);
    // Idle at 30–40 °C, it stays out of the axis.
    expect(yRange('temperature', 30, 40, v100s)).toEqual([25, 45]);
  });

  it('draws each power limit, and reaches it only when the readings come near it', () => {
    const v100s = chartLimits('power', v100sX8Snapshot());
    expect(v100s).toMatchObject({ ceiling: null, lines: [250] });
    // The capture's busiest V100S draws 233 W: the 250 W limit is in view.
    expect(yRange('power', 61.5, 233, v100s)).toEqual([20, 270]);
    // Idle A5000s: 6.5–13.6 W under 230 W.
    expect(
      yRange('power', 6.52, 13.59, chartLimits('power', a5000Snapshot()))
    ).toEqual([0, 20]);
    expect(yRange('power', null, null, v100s)).toEqual([0, 10]);
  });
});

describe('reportedCharts', () => {
  it('leaves out a chart no GPU reports: utilization under MIG', () => {
    expect(reportedCharts(CHART_KINDS, a100MigSnapshot())).toEqual([
      'memory',
      'temperature',
      'power'
    ]);
    expect(reportedCharts(CHART_KINDS, a5000Snapshot())).toEqual(CHART_KINDS);
  });

  it("adds the dashboard's PCIe chart where the GPUs report it, NVLink only on boards with it", () => {
    const kinds = [...CHART_KINDS, ...LINK_CHART_KINDS];
    // Through nvidia-smi, the A5000s' PCIe sample comes with the XML.
    expect(reportedCharts(kinds, a5000Snapshot())).toEqual([
      ...CHART_KINDS,
      'pcie'
    ]);
    const limits = chartLimits('pcie', a5000Snapshot());
    // An idle bus still gets an axis to 1 MB/s; a busy one a little above it.
    expect(yRange('pcie', 0, 450e3, limits)).toEqual([0, 1e6]);
    expect(yRange('nvlink', 0, 40e9, limits)).toEqual([0, 44e9]);
  });
});

describe('currentColumns', () => {
  it('draws only the GPUs the snapshot reports, in the history order', () => {
    const buffer = new GpuHistoryBuffer();
    buffer.append(a5000History());
    // Readings of an A100 the server replayed before (another UUID).
    buffer.append({
      ...repeatedHistory(1796012300, 1, 1),
      gpus: [
        {
          ...repeatedHistory(1796012300, 1, 1).gpus[0],
          uuid: a100MigSnapshot().gpus[0].uuid
        }
      ]
    });

    const columns = currentColumns(buffer, a5000Snapshot());

    expect(buffer.gpus).toHaveLength(3);
    expect(columns.map(column => column.uuid)).toEqual(
      a5000Snapshot().gpus.map(gpu => gpu.uuid)
    );
    expect(chartData(buffer, 'power', columns)).toHaveLength(3);
  });
});

describe('cell run bands', () => {
  const bands = [
    { key: 'a', start: 100, end: 160, label: '[1] train(model)' },
    { key: 'b', start: 150, end: 150.2, label: '[2] print(loss)' },
    { key: 'c', start: 400, end: 410, label: '[3] evaluate()' }
  ];

  it('finds the latest band at a time, and a short one within the tolerance', () => {
    expect(bandAt(bands, 130, 0)?.key).toBe('a');
    expect(bandAt(bands, 150.1, 0)?.key).toBe('b');
    expect(bandAt(bands, 151, 0)?.key).toBe('a');
    expect(bandAt(bands, 170, 5)).toBeNull();
    expect(bandAt(bands, 413, 5)?.key).toBe('c');
  });

  it('clips bands to the plotting area, drops those outside, and widens short ones', () => {
    // 1 canvas pixel per second, the plotting area over 120 s to 420 s.
    const toPixel = (time: number) => time - 100;

    const extents = bandExtents(
      [...bands, { key: 'd', start: 10, end: 20, label: '[0] setup' }],
      toPixel,
      { left: 20, width: 300 },
      3
    );

    expect(extents).toEqual([
      { left: 20, width: 40 },
      { left: 50, width: 3 },
      { left: 300, width: 10 }
    ]);
  });

  it('counts the bands a window shows', () => {
    expect(
      bandsIn(bands, { min: 155, max: 500 }).map(band => band.key)
    ).toEqual(['a', 'c']);
    expect(bandsIn(bands, null)).toEqual([]);
  });
});

describe('machineChartOptions', () => {
  const theme = chartTheme(() => '#000', '10px sans-serif');
  const range = (
    options: ReturnType<typeof machineChartOptions>,
    min: number | null,
    max: number | null
  ) =>
    (options.scales!.y.range as (...args: unknown[]) => [number, number])(
      null,
      min,
      max
    );

  it('scales CPU to 100 %, memory to the limit (drawn), throughput to its readings', () => {
    const cpu = machineChartOptions({
      kind: 'cpu',
      theme,
      memoryTotalMiB: null,
      trans
    });
    expect(range(cpu, 3, 12)).toEqual([-3, 100]);
    const memory = machineChartOptions({
      kind: 'memory',
      theme,
      memoryTotalMiB: 24105,
      trans
    });
    // 1.4 GiB in use of the recording machine's 23.5 GiB: the whole of it.
    expect(range(memory, 1400, 1434)).toEqual([-24105 * 0.03, 24105]);
    // The gaps in the readings on every chart; the limit on this one.
    expect(memory.hooks?.draw).toHaveLength(2);
    expect(cpu.hooks?.draw).toHaveLength(1);
    const throughput = machineChartOptions({
      kind: 'throughput',
      theme,
      memoryTotalMiB: null,
      trans
    });
    expect(range(throughput, 0, 15866)[1]).toBeCloseTo(17452.6);
    expect(throughput.series.map(series => series.label)).toEqual([
      undefined,
      'Disk read',
      'Disk written',
      'Network received',
      'Network sent'
    ]);
    const values = throughput.axes![1].values as (
      plot: unknown,
      splits: number[],
      axisIndex: number,
      space: number,
      increment: number
    ) => string[];
    // Every tick in the unit of the largest, with the decimals its step
    // needs: not "500 MB/s" beside "1.0 GB/s", nor ".5 GB/s" cut.
    expect(values(null, [0, 5e8, 1e9, 1.5e9], 1, 30, 5e8)).toEqual([
      '0.0 GB/s',
      '0.5 GB/s',
      '1.0 GB/s',
      '1.5 GB/s'
    ]);
    expect(values(null, [0, 1e6, 2e6], 1, 30, 1e6)).toEqual([
      '0 MB/s',
      '1 MB/s',
      '2 MB/s'
    ]);
  });

  it('sizes a y axis to its widest tick label: "1000" whole on a GB200, not "000"', () => {
    const options = chartOptions({
      kind: 'power',
      gpus: [{ index: 0 }],
      theme: chartTheme(name => `value of ${name}`, '11px sans-serif'),
      limits: { ceiling: null, lines: [1200], memoryTotals: new Map() },
      trans
    });
    const size = options.axes![1].size as (
      plot: unknown,
      values: string[] | null
    ) => number;
    // A font of 6 px a character.
    const plot = {
      ctx: {
        font: '',
        save: () => undefined,
        restore: () => undefined,
        measureText: (text: string) => ({ width: text.length * 6 })
      }
    };
    expect(size(plot, ['0', '500', '1000'])).toBe(4 * 6 + 16);
    expect(size(plot, ['0', '5', '10'])).toBe(40);
    expect(options.axes![1].incrs).not.toContain(0.5);
  });
});
