import { TranslationBundle } from '@jupyterlab/translation';
import type uPlot from 'uplot';

import { IGpuTimeSeries } from '../tokens';
import { IMachineSeries } from '../restapi/gpus';
import {
  drawLimitLines,
  gibAxis,
  IChartTheme,
  rateAxis,
  timeChartOptions
} from './charts';
import { formatMemory, formatPercent, formatRate } from '../format/units';

/**
 * The dashboard's charts of the machine beside the GPUs.
 *
 * - `cpu`: CPU in use, in percent of the cores the scope has
 * - `memory`: memory in use, up to the limit (the container's, or the
 *   host's memory), drawn as a line
 * - `throughput`: disk read and written, network received and sent
 */
export type MachineChartKind = 'cpu' | 'memory' | 'throughput';

/**
 * The machine's charts in the order the dashboard shows them.
 */
export const MACHINE_CHART_KINDS: readonly MachineChartKind[] = [
  'cpu',
  'memory',
  'throughput'
];

/**
 * The columns each chart draws, a line each.
 */
const CHART_COLUMNS: {
  readonly [K in MachineChartKind]: readonly (keyof IMachineSeries)[];
} = {
  cpu: ['cpu_percent'],
  memory: ['memory_used_mib'],
  throughput: [
    'disk_read_bytes_per_second',
    'disk_write_bytes_per_second',
    'network_received_bytes_per_second',
    'network_sent_bytes_per_second'
  ]
};

/**
 * Whether the history holds any reading of the machine (a server before
 * these readings, or the CLI's snapshots, has none).
 */
export function hasMachineReadings(history: IGpuTimeSeries): boolean {
  return history.machine.memory_used_mib.some(value => value !== null);
}

/**
 * A chart's data: the time column, then its lines.
 */
export function machineChartData(
  history: IGpuTimeSeries,
  kind: MachineChartKind
): uPlot.AlignedData {
  return [
    history.timestamps,
    ...CHART_COLUMNS[kind].map(column => history.machine[column])
  ] as uPlot.AlignedData;
}

/**
 * The names of a chart's lines, in the order of its data.
 */
export function machineSeriesNames(
  kind: MachineChartKind,
  trans: TranslationBundle
): string[] {
  switch (kind) {
    case 'cpu':
      return [trans.__('CPU')];
    case 'memory':
      return [trans.__('Memory')];
    case 'throughput':
      return [
        trans.__('Disk read'),
        trans.__('Disk written'),
        trans.__('Network received'),
        trans.__('Network sent')
      ];
  }
}

/**
 * A reading of a chart as its legend and tooltip tell it.
 */
export function formatMachineReading(
  kind: MachineChartKind,
  value: number,
  trans: TranslationBundle
): string {
  switch (kind) {
    case 'cpu':
      return formatPercent(value, trans);
    case 'memory':
      return formatMemory(value, trans);
    case 'throughput':
      return formatRate(value, trans);
  }
}

/**
 * The uPlot options of a machine chart, less its size: CPU from 0 to 100 %,
 * memory from 0 to the latest limit (drawn), throughput from 0 to a little
 * above its readings.
 */
export function machineChartOptions(source: {
  kind: MachineChartKind;
  theme: IChartTheme;
  memoryTotalMiB: number | null;
  syncKey?: string;
  trans: TranslationBundle;
}): Omit<uPlot.Options, 'width' | 'height'> {
  const { kind, theme, memoryTotalMiB, trans } = source;
  const names = machineSeriesNames(kind, trans);
  return timeChartOptions({
    theme,
    gapLabel: trans.__('no readings'),
    syncKey: source.syncKey,
    series: names.map((label, position) => ({
      label,
      colorIndex: position,
      // The network's lines dashed: the disk's and the network's apart.
      dash: kind === 'throughput' && position >= 2 ? [5, 3] : null
    })),
    yRange: (min, max) => {
      switch (kind) {
        case 'cpu':
          return [0, 100];
        case 'memory':
          return [0, Math.max(memoryTotalMiB ?? 0, max ?? 0, 1)];
        case 'throughput':
          return [0, Math.max(1024, (max ?? 0) * 1.1)];
      }
    },
    yAxis:
      kind === 'memory'
        ? gibAxis()
        : kind === 'throughput'
          ? rateAxis(trans)
          : {},
    draw:
      kind === 'memory' && memoryTotalMiB !== null
        ? plot =>
            drawLimitLines(plot, [memoryTotalMiB], theme, value =>
              formatMemory(value, trans)
            )
        : undefined
  });
}
