/**
 * What the charts show, apart from how uPlot draws them: the panel, which
 * loads with JupyterLab, needs these, and not uPlot.
 */
import { GpuSeriesField, IGpuTimeSeries } from '../tokens';
import { indexAt } from '../gpu/history';

/**
 * The charts of the GPUs: the panel's four, and what each GPU receives over
 * PCIe (from the host: a data loader feeding it) and over its NVLinks (from
 * its peers: an all-reduce), which the dashboard adds.
 */
export type ChartKind = PanelChartKind | 'pcie' | 'nvlink';

/**
 * The charts of the panel.
 */
export type PanelChartKind = 'utilization' | 'memory' | 'temperature' | 'power';

/**
 * The charts in the order the panel shows them.
 */
export const CHART_KINDS: readonly PanelChartKind[] = [
  'utilization',
  'memory',
  'temperature',
  'power'
];

/**
 * The dashboard's charts of the GPUs' links, after {@link CHART_KINDS}; each
 * only where a GPU reports it (NVLink is on data-centre boards only).
 */
export const LINK_CHART_KINDS: readonly ChartKind[] = ['pcie', 'nvlink'];

/**
 * The measurement each chart draws.
 */
export const CHART_FIELDS: { readonly [K in ChartKind]: GpuSeriesField } = {
  utilization: 'utilization_gpu',
  memory: 'memory_used_mib',
  temperature: 'temperature_c',
  power: 'power_draw_w',
  pcie: 'pcie_received_bytes_per_second',
  nvlink: 'nvlink_received_bytes_per_second'
};

/**
 * A span of time on a chart's x axis, in seconds since the epoch.
 */
export interface ITimeSpan {
  min: number;
  max: number;
}

/**
 * The span of the x axis that shows the last `windowSeconds` of readings,
 * in seconds since the epoch; null when there is no reading.
 */
export function chartWindow(
  history: IGpuTimeSeries,
  windowSeconds: number
): ITimeSpan | null {
  const { timestamps } = history;
  if (timestamps.length === 0) {
    return null;
  }
  const max = timestamps[timestamps.length - 1];
  return { min: max - windowSeconds, max };
}

/**
 * The positions of the first and the last reading inside `span`; null when
 * none is.
 */
export function readingsIn(
  timestamps: readonly number[],
  span: ITimeSpan
): { first: number; last: number } | null {
  const first = indexAt(timestamps, span.min);
  const last = indexAt(timestamps, span.max + SAME_MOMENT) - 1;
  return last >= first ? { first, last } : null;
}

/**
 * Readings this close (in seconds) to a span's end are in it: the end of a
 * window is the last reading's own time.
 */
const SAME_MOMENT = 1e-6;

/**
 * The spans the charts can show, in seconds: 1 min, 5 min, 15 min, 1 h.
 */
export const WINDOW_SECONDS: readonly number[] = [60, 300, 900, 3600];
