import type uPlot from 'uplot';

import type { IChartTheme } from './charts';

/**
 * The spans of time a chart has no readings for, in seconds since the epoch:
 * where the history put a reading of nulls between two readings further
 * apart than its sampling (the server's sampler paused, or the machine
 * slept). A series that simply began later is no gap.
 */
export function readingGaps(data: uPlot.AlignedData): [number, number][] {
  const [times, ...series] = data;
  const gaps: [number, number][] = [];
  for (let at = 1; at < times.length - 1; at++) {
    const empty = (position: number) =>
      series.every(values => values[position] === null);
    if (empty(at) && !empty(at - 1) && !empty(at + 1)) {
      gaps.push([times[at - 1], times[at + 1]]);
    }
  }
  return gaps;
}

/**
 * Mark each gap in the readings, so that a pause does not read as a chart
 * that forgot to draw: a faint shade across it, and `label` ("no readings")
 * at its top where it fits.
 */
export function drawGaps(plot: uPlot, theme: IChartTheme, label: string): void {
  const gaps = readingGaps(plot.data);
  if (gaps.length === 0) {
    return;
  }
  const { ctx, bbox } = plot;
  ctx.save();
  // The canvas counts device pixels; the theme's font is in CSS pixels.
  ctx.font = theme.font.replace(
    /([\d.]+)px/,
    (_, size) => `${Number(size) * devicePixelRatio}px`
  );
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const textWidth = ctx.measureText(label).width;
  for (const [from, to] of gaps) {
    const left = Math.max(bbox.left, plot.valToPos(from, 'x', true));
    const right = Math.min(
      bbox.left + bbox.width,
      plot.valToPos(to, 'x', true)
    );
    if (right <= left) {
      continue;
    }
    ctx.globalAlpha = 0.12;
    ctx.fillStyle = theme.axisColor;
    ctx.fillRect(left, bbox.top, right - left, bbox.height);
    ctx.globalAlpha = 1;
    if (right - left > textWidth + 4 * devicePixelRatio) {
      ctx.fillStyle = theme.axisColor;
      ctx.fillText(label, (left + right) / 2, bbox.top + 2 * devicePixelRatio);
    }
  }
  ctx.restore();
}
