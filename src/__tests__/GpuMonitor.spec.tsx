import { act, fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';

import { NotebookGpuRuns } from '../cells/notebookRuns';

import { FreeGpuHint } from '../components/FreeGpuHint';
import { GpuMonitor } from '../components/GpuMonitor';
import { CHART_KINDS } from '../charts/chartKinds';
import { GpuHistoryBuffer } from '../gpu/history';
import { IGpuMonitorModel, IRequestFailure } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { IKernelSummary } from '../restapi/kernels';
import { clickChartAt, fakeCharts } from './fakeUPlot';
import { modelState } from './modelState';
import { fakeActions } from './panelActions';
import {
  a5000History,
  a5000KernelSnapshot,
  a5000Kernels,
  a5000KernelSpans,
  a5000Snapshot,
  driverNotLoadedSnapshot,
  noGpuSnapshot,
  repeatedHistory
} from './payloads';
import { trans } from './trans';

jest.mock('uplot', () => jest.requireActual('./fakeUPlot'));

/**
 * A model in a given state.
 */
function modelWith(
  snapshot: IGpuSnapshot | null,
  failure: IRequestFailure | null = null,
  history = new GpuHistoryBuffer(),
  kernels: IKernelSummary[] | null = null
): IGpuMonitorModel {
  return modelState({ snapshot, failure, history, kernels });
}

/**
 * The panel's content for a model.
 */
function renderPanel(
  model: IGpuMonitorModel,
  changes: Partial<GpuMonitor.IProps> = {}
): ReturnType<typeof render> {
  return render(
    <GpuMonitor
      model={model}
      charts={CHART_KINDS}
      windowSeconds={300}
      themeRevision={0}
      onWindowChange={jest.fn()}
      onExport={jest.fn()}
      notebook={null}
      freeGpuMinFreeShare={0.2}
      onRevealCell={jest.fn()}
      lab={null}
      actions={fakeActions()}
      trans={trans}
      {...changes}
    />
  );
}

describe('GpuMonitor', () => {
  it('says it is reading the GPUs before the first answer', () => {
    const { getByRole } = renderPanel(modelWith(null));

    expect(getByRole('status').textContent).toBe('Reading the GPUs…');
  });

  it("shows the server's message and hint when the driver is not loaded", () => {
    const snapshot = driverNotLoadedSnapshot();

    const { getByRole, queryAllByRole } = renderPanel(modelWith(snapshot));

    const alert = getByRole('alert');
    expect(alert.textContent).toContain(snapshot.error!.message);
    // The hint's commands are code, each with a copy button; the one that
    // needs root is what to ask an administrator.
    expect(
      Array.from(alert.querySelectorAll('code')).map(code => code.textContent)
    ).toEqual([
      'sudo modprobe nvidia',
      'dmesg | grep -i nvidia',
      'sudo modprobe nvidia'
    ]);
    expect(alert.textContent).toContain(snapshot.error!.hint.replace(/`/g, ''));
    expect(
      within(alert).getAllByRole('button', {
        name: 'Copy sudo modprobe nvidia'
      })
    ).toHaveLength(2);
    expect(alert.textContent).toContain(
      'No sudo here? Ask your administrator to run: sudo modprobe nvidia'
    );
    expect(alert.textContent).toMatch(
      /Last tried at \d+:05:12\s?[AP]?M? · retrying every 1 s$/
    );
    expect(queryAllByRole('article')).toHaveLength(0);
    expect(queryAllByRole('status')).toHaveLength(0);
    // Nothing to chart: no window to pick, nothing to export.
    expect(queryAllByRole('combobox')).toHaveLength(0);
    expect(queryAllByRole('button', { name: 'Export CSV' })).toHaveLength(0);
  });

  it('keeps the last readings, greyed, under the error when the driver fails mid-session', () => {
    const model = {
      ...modelWith(driverNotLoadedSnapshot()),
      lastReadings: a5000Snapshot()
    } as IGpuMonitorModel;

    const { getByRole, getAllByRole, container } = renderPanel(model);

    expect(getByRole('alert').textContent).toContain(
      "couldn't communicate with the NVIDIA driver"
    );
    expect(getAllByRole('article')).toHaveLength(2);
    const readings = container.querySelector('.jp-GpuMonitor-readings')!;
    expect(readings.classList).toContain('jp-mod-stale');
    expect(readings.textContent).toMatch(/^Last readings at /);
    // No GPU is proposed from readings that are not current.
    expect(readings.textContent).not.toContain('Least used');
    // The last readings' charts keep their window and export.
    expect(getByRole('button', { name: 'Export CSV' })).toBeTruthy();
  });

  it('says calmly that a server without an NVIDIA driver has no GPU, the detail folded away', () => {
    const snapshot = noGpuSnapshot();

    const { getByRole, queryAllByRole, container } = renderPanel(
      modelWith(snapshot)
    );

    expect(queryAllByRole('alert')).toHaveLength(0);
    const status = getByRole('status');
    expect(status.textContent).toMatch(/^No NVIDIA GPU found on this server/);
    const details = container.querySelector('details')!;
    expect(details.open).toBe(false);
    expect(details.textContent).toContain(
      'NVML: NVML Shared Library Not Found; nvidia-smi was not found'
    );
    expect(details.textContent).toContain(snapshot.error!.hint);
  });

  it('shows a Prometheus source without its URL as the setting to correct, not as no GPU', () => {
    const snapshot = noGpuSnapshot();
    snapshot.source = 'prometheus';
    snapshot.error!.message = 'GpuMonitor.prometheus_url is not set';

    const { getByRole } = renderPanel(modelWith(snapshot));

    expect(getByRole('alert').textContent).toContain(
      'GpuMonitor.prometheus_url is not set'
    );
  });

  it('says how to enable a missing server extension, not an endless spinner', () => {
    const { getByRole, queryAllByRole } = renderPanel(
      modelWith(null, {
        kind: 'not_enabled',
        message: 'Not Found',
        status: 404
      })
    );

    expect(getByRole('alert').textContent).toContain(
      'jupyter server extension enable jupyterlab_gpu_monitor'
    );
    expect(queryAllByRole('status')).toHaveLength(0);
  });

  it('keeps the last readings, dimmed, when the server cannot be reached', () => {
    const { getByRole, getAllByRole, container } = renderPanel(
      modelWith(a5000Snapshot(), {
        kind: 'network',
        message: 'Failed to fetch',
        status: null
      })
    );

    expect(getByRole('alert').textContent).toContain(
      'The Jupyter server cannot be reached.'
    );
    expect(getAllByRole('article')).toHaveLength(2);
    expect(container.querySelector('.jp-mod-stale')).not.toBeNull();
  });

  it('says so when the server reports no GPU', () => {
    const { container } = renderPanel(
      modelWith({ ...a5000Snapshot(), gpus: [] })
    );

    expect(container.textContent).toContain('The server reports no GPU.');
  });

  it('shows a row per GPU and the charts chosen in the settings', () => {
    const history = new GpuHistoryBuffer();
    history.append(a5000History());

    const { getAllByRole, getByRole, container } = renderPanel(
      modelWith(a5000Snapshot(), null, history),
      { charts: ['utilization', 'memory'] }
    );

    expect(getAllByRole('article')).toHaveLength(2);
    expect(getAllByRole('figure').map(figure => figure.textContent)).toEqual([
      expect.stringMatching(/^Utilization \(%\)GPU 0 0 %GPU 1 0 %$/),
      expect.stringMatching(/^Memory used \(GiB\)GPU 0 21.9 GiBGPU 1 16.8 GiB$/)
    ]);
    expect(container.textContent).toContain(
      'Driver 590.44.01 · CUDA 13.1 · read with nvidia-smi'
    );
    expect(getByRole('button', { name: 'Export CSV' })).not.toHaveProperty(
      'disabled',
      true
    );
  });

  it('opens a chart at full size in the dashboard from its title', () => {
    const history = new GpuHistoryBuffer();
    history.append(a5000History());
    const actions = fakeActions();
    const { getByRole } = renderPanel(
      modelWith(a5000Snapshot(), null, history),
      { charts: ['utilization', 'memory'], actions }
    );

    fireEvent.click(
      getByRole('button', {
        name: 'Open Memory used (GiB) in the GPU Dashboard'
      })
    );

    expect(actions.openDashboard).toHaveBeenCalledWith('memory');
  });

  it('offers the windows of the spec and reports the one picked', () => {
    const onWindowChange = jest.fn();
    const { getByRole } = renderPanel(modelWith(a5000Snapshot()), {
      onWindowChange
    });
    const select = getByRole('combobox') as HTMLSelectElement;

    expect([...select.options].map(option => option.text)).toEqual([
      '1 min',
      '5 min',
      '15 min',
      '1 h'
    ]);
    fireEvent.change(select, { target: { value: '3600' } });
    expect(onWindowChange).toHaveBeenCalledWith(3600);
  });

  it('exports nothing while there is no reading', () => {
    const onExport = jest.fn();
    const { getByRole } = renderPanel(modelWith(a5000Snapshot()), {
      onExport
    });

    const button = getByRole('button', { name: 'Export CSV' });
    expect(button).toHaveProperty('disabled', true);
  });

  it("lists the user's kernels with the GPU memory each holds, most first, each one click from being freed", () => {
    const kernels = a5000Kernels().reverse();
    const actions = fakeActions();

    const { getByRole } = renderPanel(
      modelWith(a5000KernelSnapshot(), null, undefined, kernels),
      { actions }
    );

    const table = getByRole('table', { name: 'GPU memory of my kernels' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map(row => row.textContent)).toEqual([
      'train.ipynbCPU 0 % · RAM 51 MiB38.7 GiBGPU 0: 21.9 GiB, GPU 1: 16.8 GiB',
      'idle.ipynbCPU 0 % · RAM 51 MiBnone'
    ]);
    fireEvent.click(
      within(rows[0]).getByRole('button', {
        name: 'Shut down the kernel of train.ipynb'
      })
    );
    expect(actions.shutDownKernel).toHaveBeenCalledWith(
      kernels[1].kernel_id,
      'train.ipynb'
    );
  });

  it('offers to point the current notebook at the least used GPU', () => {
    const actions = fakeActions();
    const { getByRole } = renderPanel(modelWith(a5000Snapshot()), {
      actions
    });

    const hint = getByRole('button', {
      name: 'Use GPU 1 in the current notebook'
    });
    expect(hint.parentElement!.textContent).toBe(
      'Least used: GPU 1, 6.7 GiB free, 0 % utilization. Use itFrom the current reading alone.'
    );
    fireEvent.click(hint);
    expect(actions.useGpus).toHaveBeenCalledWith([1]);
  });

  it('says over how long the least used GPU was measured, and the room it has once the kernel restarts', () => {
    // The recorded train.ipynb kernel holds 22430 MiB on GPU 0 and 17246
    // MiB on GPU 1, which have 1678 and 6862 MiB free; 40 s of readings.
    const snapshot = a5000KernelSnapshot();
    const kernelId = snapshot.gpus[0].processes[0].kernel_id!;
    const readings = repeatedHistory(snapshot.timestamp - 39, 40);
    readings.gpus.forEach((series, i) => {
      series.uuid = snapshot.gpus[i].uuid;
    });
    const history = new GpuHistoryBuffer();
    history.append(readings);

    const { container } = render(
      <FreeGpuHint
        snapshot={snapshot}
        history={history}
        kernelId={kernelId}
        room={{ need: null, minFreeShare: 0.5 }}
        actions={fakeActions()}
        trans={trans}
      />
    );

    expect(container.textContent).toBe(
      'Least used: GPU 1, 23.5 GiB free once this kernel restarts, 0 % utilization. Use itJudged on < 1 min of readings.'
    );
  });

  it('cannot point anything at a GPU without a notebook', () => {
    const { getByRole } = renderPanel(modelWith(a5000Snapshot()), {
      actions: fakeActions(false)
    });

    const use = getByRole('button', {
      name: 'Use GPU 1 in the current notebook'
    });
    expect(use).toHaveProperty('disabled', true);
    // Why, in place: not only in a tooltip.
    expect(use.parentElement!.textContent).toMatch(
      /Use it \(open a notebook first\)From the current reading alone\.$/
    );
  });

  it('shows what the current notebook needed at its peak, and whether it fits now', () => {
    const notebook = new NotebookGpuRuns({ path: 'work/train.ipynb' });
    notebook.need = {
      peakMemoryMiB: 39676,
      gpuCount: 2,
      perGpuMiB: [22430, 17246],
      gpuName: 'NVIDIA RTX A5000',
      date: '2026-11-30T05:11:09.636Z'
    };

    const { getByRole } = renderPanel(modelWith(a5000Snapshot()), {
      notebook
    });

    expect(
      getByRole('region', { name: 'GPU need of train.ipynb' }).textContent
    ).toBe(
      'train.ipynb needed 38.7 GiB at its peak on 2 × NVIDIA RTX A5000.GPU 0 has only 1.6 GiB free. No GPU has that much free now.'
    );
  });

  it("shades the current notebook's cell runs on every chart and reveals a cell from its band", () => {
    const history = new GpuHistoryBuffer();
    history.append(a5000History());
    const notebook = new NotebookGpuRuns({ path: 'train.ipynb' });
    const last = history.timestamps[history.timestamps.length - 1];
    const [, measured] = a5000KernelSpans().spans;
    const run = notebook.add({
      cellId: 'cell-train',
      executionCount: 4,
      firstLine: 'train(model)',
      start: last - 20,
      end: last - 5
    });
    notebook.setFigures(run, measured);
    const onRevealCell = jest.fn();

    const { getAllByRole } = renderPanel(
      modelWith(a5000Snapshot(), null, history),
      { notebook, onRevealCell, charts: ['utilization', 'memory'] }
    );

    expect(
      getAllByRole('img').map(chart => chart.getAttribute('aria-label'))
    ).toEqual([
      expect.stringMatching(
        /^Utilization \(%\) of each GPU: \d+ readings, 1 cell run shaded$/
      ),
      expect.stringMatching(
        /^Memory used \(GiB\) of each GPU: \d+ readings, 1 cell run shaded$/
      )
    ]);
    const chart = fakeCharts[fakeCharts.length - 1];
    clickChartAt(chart, last - 10, act);
    expect(onRevealCell).toHaveBeenCalledWith('cell-train');
  });
});
