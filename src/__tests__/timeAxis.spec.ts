import type uPlot from 'uplot';

import { chartOptions, chartTheme } from '../charts/charts';
import { trans } from './trans';

/**
 * The tick labels of a utilization chart's time axis, in the page language
 * JupyterLab sets, for ticks `increment` seconds apart.
 */
function timeTicks(
  language: string,
  epochSeconds: number[],
  increment: number
): string[] {
  const options = chartOptions({
    kind: 'utilization',
    gpus: [{ index: 0 }],
    theme: chartTheme(() => '#000', '11px sans-serif'),
    limits: { ceiling: 100, lines: [], memoryTotals: new Map() },
    trans
  });
  const values = options.axes![0].values as (
    plot: uPlot,
    splits: number[],
    axisIndex: number,
    space: number,
    increment: number
  ) => string[];
  document.documentElement.lang = language;
  try {
    return values({} as uPlot, epochSeconds, 0, 50, increment);
  } finally {
    document.documentElement.lang = '';
  }
}

describe('the time axis of the charts', () => {
  // 13:05:30 on the machine's clock, which is what the axis shows.
  const oneFivePm = new Date(2026, 10, 30, 13, 5, 30).getTime() / 1000;

  it('writes the time as Chinese does, on a 24-hour clock', () => {
    expect(timeTicks('zh-CN', [oneFivePm], 300)).toEqual(['13:05']);
    expect(timeTicks('zh-CN', [oneFivePm], 10)).toEqual(['13:05:30']);
  });

  it('writes the time as English does, on a 12-hour clock', () => {
    const [minutes] = timeTicks('en', [oneFivePm], 300);
    const [seconds] = timeTicks('en', [oneFivePm], 10);
    expect(minutes).toMatch(/^1:05\sPM$/);
    expect(seconds).toMatch(/^1:05:30\sPM$/);
  });

  it('labels every tick', () => {
    expect(
      timeTicks('zh-CN', [oneFivePm, oneFivePm + 60, oneFivePm + 120], 60)
    ).toEqual(['13:05', '13:06', '13:07']);
  });
});
