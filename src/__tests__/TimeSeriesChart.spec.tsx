import { act, render } from '@testing-library/react';
import * as React from 'react';
import type uPlot from 'uplot';

import { TimeSeriesChart } from '../components/TimeSeriesChart';
import { fakeCharts as charts } from './fakeUPlot';

jest.mock('uplot', () => jest.requireActual('./fakeUPlot'));

/**
 * The callbacks of the ResizeObservers created.
 */
const resizeCallbacks: (() => void)[] = [];

class FakeResizeObserver {
  constructor(callback: () => void) {
    resizeCallbacks.push(callback);
  }
  observe(): void {
    // Nothing to observe in jsdom.
  }
  disconnect(): void {
    resizeCallbacks.length = 0;
  }
}

describe('TimeSeriesChart', () => {
  let themeColor: string;
  const options = (theme: { seriesColors: string[] }) => ({
    series: [{}, { stroke: theme.seriesColors[0] }]
  });
  const timestamps = [1, 2, 3];
  const values = [10, null, 30];

  beforeEach(() => {
    charts.length = 0;
    (window as any).ResizeObserver = FakeResizeObserver;
    themeColor = '#1976d2';
    // jsdom does not inherit CSS variables: answer for the theme.
    jest.spyOn(window, 'getComputedStyle').mockImplementation(
      () =>
        ({
          fontSize: '11px',
          fontFamily: 'sans-serif',
          getPropertyValue: (name: string) =>
            name === '--jp-gpu-monitor-series-0' ? ` ${themeColor}` : ''
        }) as unknown as CSSStyleDeclaration
    );
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  function props(
    changes: Partial<TimeSeriesChart.IProps> = {}
  ): TimeSeriesChart.IProps {
    return {
      options,
      data: [timestamps, values],
      xRange: { min: 0, max: 3 },
      themeRevision: 0,
      onCursor: jest.fn(),
      label: 'Utilization (%) of each GPU: 3 readings',
      ...changes
    };
  }

  it('creates the chart once and feeds new data with setData and the window with setScale', () => {
    const { rerender, getByRole } = render(<TimeSeriesChart {...props()} />);
    expect(charts).toHaveLength(1);
    expect(getByRole('img').getAttribute('aria-label')).toBe(
      'Utilization (%) of each GPU: 3 readings'
    );

    timestamps.push(4);
    values.push(40);
    rerender(
      <TimeSeriesChart
        {...props({
          data: [timestamps, values],
          xRange: { min: 1, max: 4 }
        })}
      />
    );

    expect(charts).toHaveLength(1);
    expect(charts[0].calls.slice(-2)).toEqual(['setData', 'setScale x 1-4']);
  });

  it("draws in the colours of the theme's --jp-* variables, and again when the theme changes", () => {
    const { rerender } = render(<TimeSeriesChart {...props()} />);
    expect(charts[0].options.series[1].stroke).toBe('#1976d2');

    themeColor = '#2196f3';
    rerender(<TimeSeriesChart {...props({ themeRevision: 1 })} />);

    expect(charts).toHaveLength(2);
    expect(charts[0].calls).toContain('destroy');
    expect(charts[1].calls).not.toContain('destroy');
    expect(charts[1].options.series[1].stroke).toBe('#2196f3');
  });

  it('follows the size of its container', () => {
    render(<TimeSeriesChart {...props()} />);

    act(() => resizeCallbacks.forEach(callback => callback()));

    expect(charts[0].setSize).toHaveBeenCalledTimes(1);
  });

  it('reports the reading under the cursor', () => {
    const onCursor = jest.fn();
    render(<TimeSeriesChart {...props({ onCursor })} />);
    const hook = charts[0].options.hooks!.setCursor![0]!;

    hook({ cursor: { idx: 2 } } as uPlot);

    expect(onCursor).toHaveBeenCalledWith(2);
  });

  it('draws an hour at two points a pixel column and reports the reading under the cursor', () => {
    // 700 CSS pixels wide, an hour of one reading a second.
    jest
      .spyOn(HTMLElement.prototype, 'clientWidth', 'get')
      .mockReturnValue(700);
    const hour = Array.from({ length: 3600 }, (_, i) => 1000 + i);
    const busy = hour.map((_, i) => (i === 1800 ? 100 : 50));
    const onCursor = jest.fn();
    render(
      <TimeSeriesChart
        {...props({
          data: [hour, busy],
          xRange: { min: 1000, max: 4599 },
          onCursor
        })}
      />
    );
    const drawn = charts[0].data!;
    expect(drawn[0].length).toBeLessThanOrEqual(2 * 700 + 2);
    expect(Math.max(...(drawn[1] as number[]))).toBe(100); // the peak stays

    const peak = (drawn[1] as number[]).indexOf(100);
    charts[0].options.hooks!.setCursor![0]!({ cursor: { idx: peak } } as uPlot);

    // The position of the reading in the hour, for the legend to tell.
    const [reported] = onCursor.mock.calls[0];
    expect(hour[reported]).toBe(drawn[0][peak]);
  });

  /**
   * A chart as a hook sees it: 100 canvas pixels for 100 s from t = 0, its
   * plotting area from x = 10, the cursor at `left` CSS pixels (1 s each).
   */
  function drawnChart(left?: number) {
    const ctx = {
      save: jest.fn(),
      restore: jest.fn(),
      fillRect: jest.fn(),
      fillStyle: '',
      globalAlpha: 1
    };
    return {
      ctx,
      bbox: { left: 10, top: 5, width: 100, height: 50 },
      cursor: { idx: 3, left },
      over: charts[0].over,
      valToPos: (time: number) => 10 + time,
      posToVal: (pixel: number) => pixel
    } as unknown as uPlot & { ctx: typeof ctx };
  }

  const bands = [
    { key: 'cell-a', start: 20, end: 30, label: '[1] import torch' },
    { key: 'cell-b', start: 60, end: 60.5, label: '[2] model.eval()' }
  ];

  it('shades the bands under the lines, a short one still 3 pixels wide', () => {
    jest.spyOn(window, 'getComputedStyle').mockImplementation(
      () =>
        ({
          fontSize: '11px',
          fontFamily: 'sans-serif',
          getPropertyValue: (name: string) =>
            name === '--jp-brand-color2' ? '#64b5f6' : ''
        }) as unknown as CSSStyleDeclaration
    );
    render(<TimeSeriesChart {...props({ bands })} />);
    const chart = drawnChart();

    charts[0].options.hooks!.drawClear![0]!(chart);

    expect(chart.ctx.fillStyle).toBe('#64b5f6');
    expect(chart.ctx.fillRect.mock.calls).toEqual([
      [30, 5, 10, 50],
      [70, 5, 3 * devicePixelRatio, 50]
    ]);
  });

  it('draws new bands at once, without a new chart', () => {
    const { rerender } = render(<TimeSeriesChart {...props()} />);

    rerender(<TimeSeriesChart {...props({ bands })} />);

    expect(charts).toHaveLength(1);
    expect(charts[0].calls).toContain('redraw');
  });

  it('names the band under the cursor and reveals it on a click', () => {
    const onBandHover = jest.fn();
    const onBandClick = jest.fn();
    render(<TimeSeriesChart {...props({ bands, onBandHover, onBandClick })} />);
    const hook = charts[0].options.hooks!.setCursor![0]!;

    const press = (type: string, clientX: number) =>
      charts[0].over.dispatchEvent(
        new MouseEvent(type, { clientX, clientY: 40 })
      );

    // 2 pixels (2 s) right of the second band, which is 0.5 s long.
    hook(drawnChart(62.5));
    press('mousedown', 100);
    press('mouseup', 101);
    // A drag is no click.
    press('mousedown', 100);
    press('mouseup', 140);
    hook(drawnChart(45));
    press('mousedown', 100);
    press('mouseup', 100);

    expect(onBandHover.mock.calls).toEqual([[bands[1]], [null]]);
    expect(onBandClick.mock.calls).toEqual([[bands[1]]]);
  });

  it('is destroyed with the component', () => {
    const { unmount } = render(<TimeSeriesChart {...props()} />);

    unmount();

    expect(charts[0].calls).toContain('destroy');
    expect(resizeCallbacks).toHaveLength(0);
  });
});
