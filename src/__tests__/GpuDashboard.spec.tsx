import { act, fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';
import type uPlot from 'uplot';

import { NotebookGpuRuns } from '../cells/notebookRuns';
import { GpuDashboard } from '../components/GpuDashboard';
import { GpuHistoryBuffer } from '../gpu/history';
import { formatClockTime } from '../format/units';
import { IGpuMonitorModel } from '../tokens';
import { IGpuHistory, IGpuSnapshot } from '../restapi/gpus';
import { clickChartAt, fakeCharts } from './fakeUPlot';
import { modelState } from './modelState';
import {
  a100MigSnapshot,
  a5000History,
  a5000KernelSpans,
  a5000Snapshot,
  driverNotLoadedSnapshot,
  noGpuSnapshot
} from './payloads';
import { trans } from './trans';

jest.mock('uplot', () => jest.requireActual('./fakeUPlot'));

/**
 * A model with a snapshot and the A5000 capture's recorded history: its
 * GPUs only, unless the machine's readings are asked for too.
 */
function modelWith(
  snapshot: IGpuSnapshot,
  machine = false
): {
  model: IGpuMonitorModel;
  history: GpuHistoryBuffer;
} {
  const history = new GpuHistoryBuffer();
  const recorded = a5000History();
  history.append(machine ? recorded : { ...recorded, machine: null });
  return { model: modelState({ snapshot, history }), history };
}

/**
 * The dashboard for a model.
 */
function renderDashboard(
  model: IGpuMonitorModel,
  notebook: NotebookGpuRuns | null = null,
  onRevealCell = jest.fn()
): ReturnType<typeof render> {
  return render(
    <GpuDashboard
      model={model}
      windowSeconds={3600}
      themeRevision={0}
      notebook={notebook}
      onRevealCell={onRevealCell}
      trans={trans}
    />
  );
}

/**
 * The recorded history again, `seconds` later.
 */
function later(seconds: number): IGpuHistory {
  const history = a5000History();
  history.timestamps = history.timestamps.map(time => time + seconds);
  return history;
}

beforeEach(() => {
  fakeCharts.length = 0;
});

describe('GpuDashboard', () => {
  it('draws a full-size chart per measurement, their cursors moving together', () => {
    const { model } = modelWith(a5000Snapshot());

    const { getAllByRole } = renderDashboard(model);

    expect(
      getAllByRole('figure').map(figure => figure.firstChild!.textContent)
    ).toEqual([
      'Utilization (%)',
      'Memory used (GiB)',
      'Temperature (°C)',
      'Power (W)',
      // What the GPUs receive from the host; these boards have no NVLink.
      'PCIe received'
    ]);
    expect(fakeCharts.map(chart => chart.options.cursor?.sync?.key)).toEqual(
      Array(5).fill('jp-GpuMonitor-dashboard')
    );
  });

  it("names the limits drawn in the temperature and power charts' legends", () => {
    const { model } = modelWith(a5000Snapshot());

    const { getAllByRole } = renderDashboard(model);

    const legends = getAllByRole('figure').map(
      figure => figure.querySelector('.jp-GpuMonitor-legendLimit')?.textContent
    );
    // Both A5000 slow down from 95 °C and are capped at 230 W.
    expect(legends).toEqual([
      undefined,
      undefined,
      'Slows down at 95 °C',
      'Limit 230 W'
    ]);
  });

  it("names the crosshair's moment in each legend, beside every GPU's value then", () => {
    const { model } = modelWith(a5000Snapshot());
    const { getAllByRole } = renderDashboard(model);
    const [utilization, memory] = getAllByRole('figure');
    expect(utilization.querySelector('.jp-GpuMonitor-legendTime')).toBeNull();

    // One crosshair across the charts: each reports the reading under it.
    act(() => {
      for (const chart of fakeCharts) {
        chart.options.hooks!.setCursor![0]!({
          cursor: { idx: 0 }
        } as unknown as uPlot);
      }
    });

    const first = a5000History();
    const at = `At ${formatClockTime(first.timestamps[0], true)}:`;
    expect(
      utilization.querySelector('.jp-GpuMonitor-legendTime')?.textContent
    ).toBe(at);
    expect(
      within(memory)
        .getAllByRole('listitem')
        .map(item => item.textContent)
    ).toEqual([
      at,
      `GPU 0 ${(first.gpus[0].memory_used_mib[0]! / 1024).toFixed(1)} GiB`,
      `GPU 1 ${(first.gpus[1].memory_used_mib[0]! / 1024).toFixed(1)} GiB`
    ]);
  });

  it("shades the current notebook's cell runs on every chart, and reveals a cell from its band", () => {
    const { model, history } = modelWith(a5000Snapshot());
    const notebook = new NotebookGpuRuns({ path: 'train.ipynb' });
    const last = history.timestamps[history.timestamps.length - 1];
    const run = notebook.add({
      cellId: 'cell-train',
      executionCount: 4,
      firstLine: 'train(model)',
      start: last - 20,
      end: last - 5
    });
    notebook.setFigures(run, a5000KernelSpans().spans[1]);
    const onRevealCell = jest.fn();

    const { getAllByRole } = renderDashboard(model, notebook, onRevealCell);

    expect(
      getAllByRole('img').map(chart => chart.getAttribute('aria-label'))
    ).toEqual(Array(5).fill(expect.stringMatching(/, 1 cell run shaded$/)));
    const chart = fakeCharts[fakeCharts.length - 1];
    clickChartAt(chart, last - 10, act);
    expect(onRevealCell).toHaveBeenCalledWith('cell-train');
  });

  it("draws the machine's CPU, memory and throughput beside the GPUs', on the same crosshair", () => {
    const { model, history } = modelWith(a5000Snapshot(), true);

    const { getByRole } = renderDashboard(model);

    const machine = getByRole('region', { name: 'The machine' });
    expect(machine.querySelector('h3')?.textContent).toBe('Host');
    const figures = within(machine).getAllByRole('figure');
    expect(figures.map(figure => figure.firstChild!.textContent)).toEqual([
      'CPU (%)',
      'Memory (GiB)',
      'Disk and network'
    ]);
    expect(fakeCharts.map(chart => chart.options.cursor?.sync?.key)).toEqual(
      Array(8).fill('jp-GpuMonitor-dashboard')
    );
    // The latest readings in the legends, as the recorded history has them.
    const last = history.timestamps.length - 1;
    const cpu = history.machine.cpu_percent[last]!;
    expect(
      figures[0].querySelector('.jp-GpuMonitor-legendValue')?.textContent
    ).toBe(`${Math.round(cpu)} %`);
    expect(
      within(figures[2])
        .getAllByRole('listitem')
        .map(item => item.firstChild?.textContent)
    ).toEqual([
      'Disk read',
      'Disk written',
      'Network received',
      'Network sent'
    ]);
  });

  it('draws no chart of a measurement no GPU reports, and says which', () => {
    const { model } = modelWith(a100MigSnapshot());

    const { getAllByRole, getByText } = renderDashboard(model);

    expect(getByText('Not reported by these GPUs: utilization.')).toBeTruthy();
    // Memory, temperature and power; no PCIe chart before the history holds
    // a reading of it for this A100.
    expect(getAllByRole('figure')).toHaveLength(3);
  });

  it('keeps the PCIe chart while a read has no rate (a first read, a counter reset)', () => {
    const snapshot = a5000Snapshot();
    for (const gpu of snapshot.gpus) {
      gpu.pcie_received_bytes_per_second = null;
    }
    const { model } = modelWith(snapshot);

    const { getAllByRole } = renderDashboard(model);

    expect(
      getAllByRole('figure').map(figure => figure.firstChild!.textContent)
    ).toContain('PCIe received');
  });

  it('hides a GPU in every chart from any legend, shows one alone with Shift, and all again', () => {
    const { model } = modelWith(a5000Snapshot());
    const { getAllByRole, getByRole, queryByRole } = renderDashboard(model);
    const pressed = (gpu: string) =>
      getAllByRole('button', { name: new RegExp(`^${gpu} `) }).map(button =>
        button.getAttribute('aria-pressed')
      );

    fireEvent.click(getAllByRole('button', { name: /^GPU 1 / })[2]);

    expect(pressed('GPU 1')).toEqual(Array(5).fill('false'));
    expect(pressed('GPU 0')).toEqual(Array(5).fill('true'));
    // Each chart is drawn anew with GPU 0's line only.
    const latest = fakeCharts.slice(-5);
    expect(latest.map(chart => chart.options.series.length)).toEqual(
      Array(5).fill(2)
    );

    fireEvent.click(getByRole('button', { name: 'Show all GPUs' }));
    expect(pressed('GPU 1')).toEqual(Array(5).fill('true'));
    expect(queryByRole('button', { name: 'Show all GPUs' })).toBeNull();

    fireEvent.click(getAllByRole('button', { name: /^GPU 1 / })[0], {
      shiftKey: true
    });
    expect(pressed('GPU 0')).toEqual(Array(5).fill('false'));
    expect(pressed('GPU 1')).toEqual(Array(5).fill('true'));
  });

  it('holds the charts while paused, and catches up on resume', () => {
    const { model, history } = modelWith(a5000Snapshot());
    const { getByRole, getAllByRole, rerender } = renderDashboard(model);
    // The readings the utilization chart shows, from its accessible name.
    const readings = () =>
      Number(
        /: (\d+) readings$/.exec(
          within(getAllByRole('figure')[0])
            .getByRole('img')
            .getAttribute('aria-label')!
        )![1]
      );
    const before = readings();
    expect(before).toBeGreaterThan(40);

    fireEvent.click(getByRole('button', { name: 'Pause' }));
    history.append(later(60));
    const props = {
      windowSeconds: 3600,
      themeRevision: 0,
      notebook: null,
      onRevealCell: jest.fn(),
      trans
    };
    rerender(<GpuDashboard model={model} {...props} />);
    expect(readings()).toBe(before);
    expect(
      getByRole('button', { name: 'Resume' }).getAttribute('aria-pressed')
    ).toBe('true');

    fireEvent.click(getByRole('button', { name: 'Resume' }));
    expect(readings()).toBeGreaterThan(before + 40);
  });

  it('zooms every chart into the span dragged across one, held there until Back to live', () => {
    const { model, history } = modelWith(a5000Snapshot(), true);
    const { getByRole, getAllByRole, queryByRole, rerender } =
      renderDashboard(model);
    const labels = () =>
      getAllByRole('figure').map(figure =>
        within(figure).getByRole('img').getAttribute('aria-label')
      );
    const readings = () => Number(/: (\d+) readings$/.exec(labels()[0]!)![1]);
    const before = readings();
    const start = history.timestamps[0];
    // 20 s of the recording, dragged across the power chart.
    const inSpan = history.timestamps.filter(
      time => time >= start + 5 && time <= start + 25
    ).length;
    const dragged = fakeCharts[3];
    const self = {
      select: { left: 5, width: 20, top: 0, height: 100 },
      posToVal: (pixel: number) => start + pixel,
      setSelect: jest.fn()
    } as unknown as uPlot;

    act(() => dragged.options.hooks!.setSelect![0]!(self));

    expect(readings()).toBe(inSpan);
    expect(inSpan).toBeLessThan(before);
    // Every chart, the machine's too, shows that span.
    expect(fakeCharts.length).toBeGreaterThan(5);
    for (const chart of fakeCharts) {
      expect(chart.calls[chart.calls.length - 1]).toBe(
        `setScale x ${start + 5}-${start + 25}`
      );
    }
    expect(getByRole('status').textContent).toBe(
      `Showing ${formatClockTime(start + 5, true)} to ${formatClockTime(start + 25, true)}`
    );
    expect(queryByRole('button', { name: 'Pause' })).toBeNull();
    // New readings do not move it.
    history.append(later(60));
    rerender(
      <GpuDashboard
        model={model}
        windowSeconds={3600}
        themeRevision={0}
        notebook={null}
        onRevealCell={jest.fn()}
        trans={trans}
      />
    );
    expect(readings()).toBe(inSpan);

    fireEvent.click(getByRole('button', { name: 'Back to live' }));

    expect(readings()).toBeGreaterThan(before);
    expect(getByRole('button', { name: 'Pause' })).toBeTruthy();
    expect(queryByRole('status')).toBeNull();
  });

  it('takes a click on a chart for a click, not a zoom', () => {
    const { model } = modelWith(a5000Snapshot());
    const { getByRole } = renderDashboard(model);
    const self = {
      select: { left: 40, width: 2, top: 0, height: 100 },
      posToVal: (pixel: number) => pixel,
      setSelect: jest.fn()
    } as unknown as uPlot;

    act(() => fakeCharts[0].options.hooks!.setSelect![0]!(self));

    expect(getByRole('button', { name: 'Pause' })).toBeTruthy();
    expect(fakeCharts[0].calls[fakeCharts[0].calls.length - 1]).not.toMatch(
      /^setScale x 0-/
    );
  });

  it('says calmly that a server without the NVIDIA driver has no GPU', () => {
    const { model } = modelWith(noGpuSnapshot());

    const { getByRole, queryAllByRole } = renderDashboard(model);

    expect(getByRole('status').textContent).toContain(
      'No NVIDIA GPU found on this server'
    );
    expect(queryAllByRole('figure')).toHaveLength(0);
  });

  it('keeps the charts, greyed, under the error when the driver fails mid-session, and says when it last tried', () => {
    const { model } = modelWith(driverNotLoadedSnapshot());
    (model as any).lastReadings = a5000Snapshot();

    const { container, getAllByRole, getByRole } = renderDashboard(model);

    expect(getByRole('alert').textContent).toContain(
      "couldn't communicate with the NVIDIA driver"
    );
    expect(getByRole('alert').textContent).toMatch(
      /Last tried at .* · retrying every 1 s/
    );
    expect(getAllByRole('figure')).toHaveLength(5);
    expect(
      container.querySelector('.jp-GpuMonitor-dashboardCharts')?.classList
    ).toContain('jp-mod-stale');
  });
});
