import type uPlot from 'uplot';

import type { IChartTheme } from './charts';
import { NEARLY_FULL_PERCENT } from '../gpu/fullness';

/**
 * A memory line and the card it is on.
 */
export interface IMemoryLine {
  /**
   * The card's memory, in MiB; null when unknown (nothing is drawn).
   */
  totalMiB: number | null;
  /**
   * The line's colour.
   */
  color: string;
}

/**
 * Mark what is nearly out of memory on a memory chart: the span from
 * {@link NEARLY_FULL_PERCENT} to 100 % of each card's memory is tinted in
 * the warning colour, and each line is drawn three times as wide inside its
 * card's span. The lines keep their GPU's colour (GPU 1's orange is close to
 * the warning colour), so the width and the tint tell a full GPU apart.
 *
 * @param lines - the chart's lines, in the order of its series
 */
export function drawNearlyFull(
  plot: uPlot,
  lines: readonly IMemoryLine[],
  theme: IChartTheme
): void {
  const { ctx, bbox } = plot;
  const spans = new Map<number, { top: number; bottom: number }>();
  for (const { totalMiB } of lines) {
    if (totalMiB !== null && totalMiB > 0 && !spans.has(totalMiB)) {
      const top = Math.max(bbox.top, plot.valToPos(totalMiB, 'y', true));
      const bottom = plot.valToPos(
        (totalMiB * NEARLY_FULL_PERCENT) / 100,
        'y',
        true
      );
      if (bottom > top) {
        spans.set(totalMiB, { top, bottom });
      }
    }
  }
  if (spans.size === 0) {
    return;
  }
  ctx.save();
  ctx.fillStyle = theme.warnColor;
  ctx.globalAlpha = 0.12;
  for (const { top, bottom } of spans.values()) {
    ctx.fillRect(bbox.left, top, bbox.width, bottom - top);
  }
  ctx.restore();
  const times = plot.data[0];
  lines.forEach(({ totalMiB, color }, index) => {
    const span = totalMiB === null ? undefined : spans.get(totalMiB);
    const values = plot.data[index + 1];
    if (!span || !values) {
      return;
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(bbox.left, span.top, bbox.width, span.bottom - span.top);
    ctx.clip();
    ctx.strokeStyle = color;
    ctx.lineWidth = 4.5 * devicePixelRatio;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    // A gap in the readings (null) breaks the line, as uPlot draws it.
    let drawing = false;
    times.forEach((time, at) => {
      const value = values[at];
      if (value === null || value === undefined) {
        drawing = false;
        return;
      }
      const x = plot.valToPos(time, 'x', true);
      const y = plot.valToPos(value, 'y', true);
      if (drawing) {
        ctx.lineTo(x, y);
      } else {
        ctx.moveTo(x, y);
        drawing = true;
      }
    });
    ctx.stroke();
    ctx.restore();
  });
}
