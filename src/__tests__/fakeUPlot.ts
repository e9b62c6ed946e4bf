import type uPlot from 'uplot';

/**
 * What one fake chart was created with and asked.
 */
export interface IFakeChart {
  /**
   * The options it was created with.
   */
  options: uPlot.Options;
  /**
   * The calls it got, in order: `setData`, `setScale x <min>-<max>`,
   * `redraw`, `destroy`.
   */
  calls: string[];
  /**
   * Its overlay, which takes the pointer's events.
   */
  over: HTMLDivElement;
  /**
   * Its `setSize`.
   */
  setSize: jest.Mock;
  /**
   * The data of its last `setData`.
   */
  data?: uPlot.AlignedData;
}

/**
 * Every fake chart created, oldest first; empty it before each test.
 */
export const fakeCharts: IFakeChart[] = [];

/**
 * A stand-in for uPlot, which draws on a canvas jsdom does not have: it
 * records what it is created with and asked. Use it with
 * `jest.mock('uplot', () => jest.requireActual('./fakeUPlot'))`.
 */
const FakeUPlot = jest.fn().mockImplementation((options: uPlot.Options) => {
  const chart: IFakeChart = {
    options,
    calls: [],
    over: document.createElement('div'),
    setSize: jest.fn()
  };
  fakeCharts.push(chart);
  return {
    over: chart.over,
    batch: (fn: () => void) => fn(),
    redraw: () => chart.calls.push('redraw'),
    setData: (data: uPlot.AlignedData) => {
      chart.calls.push('setData');
      chart.data = data;
    },
    setScale: (key: string, range: { min: number; max: number }) =>
      chart.calls.push(`setScale ${key} ${range.min}-${range.max}`),
    setSize: chart.setSize,
    // A unit of each axis to a pixel.
    posToVal: (position: number) => position,
    destroy: () => chart.calls.push('destroy')
  };
});

/**
 * Click a chart where its time axis is at `left` (a unit to a pixel): the
 * crosshair moves there, then the overlay gets the press and the release,
 * in act() as React's events would.
 */
export function clickChartAt(
  chart: IFakeChart,
  left: number,
  act: (callback: () => void) => void
): void {
  act(() => {
    chart.options.hooks!.setCursor![0]!({
      cursor: { idx: 0, left },
      over: chart.over,
      posToVal: (pixel: number) => pixel
    } as unknown as uPlot);
    chart.over.dispatchEvent(new MouseEvent('mousedown', { clientX: 9 }));
    chart.over.dispatchEvent(new MouseEvent('mouseup', { clientX: 9 }));
  });
}

export default FakeUPlot;
