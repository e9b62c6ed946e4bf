import { nullTranslator } from '@jupyterlab/translation';
import { fireEvent, render } from '@testing-library/react';
import * as React from 'react';

import { GpuMonitor } from '../components/GpuMonitor';
import { CHART_KINDS } from '../gpu/charts';
import { GpuHistoryBuffer } from '../gpu/history';
import { IGpuMonitorModel, IGpuSnapshot, IRequestFailure } from '../tokens';
import {
  a5000History,
  a5000Snapshot,
  driverNotLoadedSnapshot
} from './payloads';

jest.mock('uplot', () => jest.requireActual('./fakeUPlot'));

const trans = nullTranslator.load('jupyterlab_gpu_monitor');

/**
 * A model in a given state.
 */
function modelWith(
  snapshot: IGpuSnapshot | null,
  failure: IRequestFailure | null = null,
  history = new GpuHistoryBuffer()
): IGpuMonitorModel {
  return {
    snapshot,
    failure,
    history,
    kernelGpus: null
  } as unknown as IGpuMonitorModel;
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
    expect(alert.textContent).toContain(snapshot.error!.hint);
    expect(queryAllByRole('article')).toHaveLength(0);
    expect(queryAllByRole('status')).toHaveLength(0);
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

  it('shows a card per GPU and the charts chosen in the settings', () => {
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
});
