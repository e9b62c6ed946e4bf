import { nullTranslator } from '@jupyterlab/translation';
import { DisposableDelegate } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';
import { fireEvent, render, within } from '@testing-library/react';
import * as React from 'react';

import { GpuMonitorPanel } from '../components/GpuMonitorPanel';
import { IRoomNeeded } from '../freeGpu/freeGpu';
import { GpuModel } from '../gpu/model';
import { filterLab, freeAnywhere, labUsers } from '../lab/choose';
import { LabView } from '../lab/LabView';
import { LedgerTable } from '../lab/LedgerTable';
import { LabModel, LEDGER_PERIODS } from '../lab/model';
import { ILabView } from '../restapi/gpus';
import { INotebookGpuNeed } from '../tokens';
import { fakeActions } from './panelActions';
import {
  lab3Machines,
  labExporters,
  labLedger1h,
  labNode3Stopped
} from './payloads';
import { a5000Server, endpoint, fakeServer, requestedUrl } from './server';
import { trans } from './trans';

jest.mock('uplot', () => jest.requireActual('./fakeUPlot'));

/**
 * The panel's default rule: a fifth of the card free, no recorded need.
 */
const DEFAULT_ROOM: IRoomNeeded = { need: null, minFreeShare: 0.2 };

/**
 * A notebook whose cells recorded a peak of `mib` on one GPU.
 */
function needing(mib: number): IRoomNeeded {
  const need: INotebookGpuNeed = {
    peakMemoryMiB: mib,
    gpuCount: 1,
    perGpuMiB: [mib],
    gpuName: 'NVIDIA H100 80GB HBM3',
    date: '2026-12-01'
  };
  return { need, minFreeShare: 0.2 };
}

function renderLab(
  view: ILabView | null,
  changes: Partial<LabView.IProps> = {}
): ReturnType<typeof render> {
  return render(
    <LabView
      view={view}
      failure={null}
      compact={true}
      room={DEFAULT_ROOM}
      trans={trans}
      {...changes}
    />
  );
}

describe('the lab filters', () => {
  it('keep the free GPUs: the idle H100s of node-3 only', () => {
    const free = filterLab(lab3Machines().nodes, { kind: 'free' });

    expect(free.map(node => [node.host, node.gpus.length])).toEqual([
      ['node-3', 8]
    ]);
  });

  it("keep the user's own: the A5000s her notebook holds", () => {
    const mine = filterLab(lab3Machines().nodes, { kind: 'mine' });

    expect(
      mine.map(node => [node.host, node.gpus.map(gpu => gpu.index)])
    ).toEqual([['node-1', [0, 1]]]);
  });

  it("keep one user's GPUs, and list who holds any", () => {
    const nodes = lab3Machines().nodes;

    expect(labUsers(nodes)).toEqual(['ana']);
    expect(filterLab(nodes, { kind: 'user', user: 'cleo' })).toEqual([]);
    expect(filterLab(nodes, { kind: 'all' })).toHaveLength(3);
  });
});

describe('a free GPU anywhere', () => {
  it('is an idle H100 nobody holds, not a busy V100S nor her own A5000', () => {
    const choice = freeAnywhere(lab3Machines(), needing(30.1 * 1024));

    expect(choice?.node.host).toBe('node-3');
    expect(choice?.gpu.index).toBe(0);
    expect(choice?.freeMiB).toBe(81559);
  });

  it('is none when no GPU has the room the notebook recorded', () => {
    expect(freeAnywhere(lab3Machines(), needing(90 * 1024))).toBeNull();
  });

  it('leaves out a machine that stopped reporting', () => {
    // node-3 gone: of the rest only the A5000 GPU 1 has a fifth free.
    const choice = freeAnywhere(labNode3Stopped(), DEFAULT_ROOM);

    expect([choice?.node.host, choice?.gpu.index]).toEqual(['node-1', 1]);
  });
});

describe('LabView', () => {
  it('says how many machines report, and marks the one that stopped', () => {
    const { getByText, getByRole } = renderLab(labNode3Stopped());

    expect(getByText('2 of 3 machines reporting').className).toContain(
      'jp-mod-warn'
    );
    const node3 = getByRole('group', { name: 'node-3' });
    expect(node3.className).toContain('jp-mod-stale');
    expect(within(node3).getByText('not reporting')).toBeTruthy();
  });

  it("shows each GPU's holder, her own marked, and the free ones", () => {
    const { getByRole } = renderLab(lab3Machines());

    const node1 = getByRole('group', { name: 'node-1' });
    const own = within(node1).getAllByRole('listitem');
    expect(own.map(cell => cell.className)).toEqual([
      'jp-GpuMonitor-labGpu jp-mod-own',
      'jp-GpuMonitor-labGpu jp-mod-own'
    ]);
    expect(own[0].textContent).toBe('00 %ana');
    expect(own[0].getAttribute('aria-label')).toContain(
      'ana: train.ipynb holds 21.9 GiB'
    );
    const node3 = getByRole('group', { name: 'node-3' });
    expect(within(node3).getByText('8 of 8 GPUs free')).toBeTruthy();
    expect(within(node3).getAllByText('free')).toHaveLength(8);
  });

  it('shows the machines only an exporter reports, with their GPUs held by nobody known', () => {
    const { getByRole } = renderLab(labExporters());

    const box = getByRole('group', { name: 'gpu-box-7' });
    const via = within(box).getByText('via nvidia_gpu_exporter');
    expect(via.getAttribute('title')).toBe(
      'No server with the GPU monitor reports this machine: its GPUs as its nvidia_gpu_exporter reports them, without notebooks.'
    );
    const [h100] = within(box).getAllByRole('listitem');
    expect(h100.textContent).toBe('0100 %in use');
    expect(h100.getAttribute('aria-label')).toContain(
      'held by no notebook of the lab'
    );
    const node = getByRole('group', { name: 'ub20-a100-k8s' });
    expect(within(node).getByText('via DCGM exporter')).toBeTruthy();
    // Under MIG, DCGM has no utilisation of the whole GPU.
    expect(within(node).getByRole('listitem').textContent).toBe('0n/ain use');
  });

  it('proposes the best GPU anywhere, linked to where the admin said', () => {
    const { getByRole } = renderLab(lab3Machines(), {
      room: needing(30.1 * 1024)
    });

    const link = getByRole('link', { name: 'node-3 GPU 0' });
    expect(link.getAttribute('href')).toBe(
      'https://hub.lab/hub/spawn/ana/node-3'
    );
    expect(link.parentElement?.textContent).toBe(
      "Free GPU anywhere: node-3 GPU 0: 79.6 GiB free, idle 0 s; fits this notebook's recorded 30.1 GiB"
    );
  });

  it('filters to the free GPUs at a click', () => {
    const { getByRole, queryByRole } = renderLab(lab3Machines());

    fireEvent.click(getByRole('button', { name: 'Free' }));

    expect(queryByRole('group', { name: 'node-1' })).toBeNull();
    expect(getByRole('group', { name: 'node-3' })).toBeTruthy();
    expect(
      getByRole('button', { name: 'Free' }).getAttribute('aria-pressed')
    ).toBe('true');
  });

  it("says what the lab's Prometheus failing means, and how to fix it", () => {
    const view: ILabView = {
      ...lab3Machines(),
      nodes: [],
      reporting: 0,
      known: 0,
      error: {
        kind: 'permission',
        message: 'Prometheus at http://prometheus.lab:9090 answered 401',
        hint: 'put a bearer token in the file'
      }
    };
    const { getByRole } = renderLab(view);

    expect(getByRole('alert').textContent).toContain('answered 401');
    expect(getByRole('alert').textContent).toContain('bearer token');
  });
});

describe('LabModel', () => {
  it('asks while watched, and never again where the server has no lab', async () => {
    const notConfigured: ILabView = {
      ...labNode3Stopped(),
      configured: false,
      nodes: [],
      reporting: 0,
      known: 0,
      error: {
        kind: 'not_installed',
        message: 'GpuMonitor.lab_prometheus_url is not set',
        hint: 'Set c.GpuMonitor.lab_prometheus_url'
      }
    };
    const server = fakeServer(() => notConfigured);
    const lab = new LabModel({
      serverSettings: server.settings,
      refreshSeconds: 0.01
    });
    const changed = new Promise(resolve => lab.changed.connect(resolve));
    expect(server.requests).toHaveLength(0);

    const watcher = lab.watch();
    await changed;
    expect(server.requests.map(endpoint)).toEqual(['lab']);
    expect(lab.configured).toBe(false);
    // Ten refresh periods later, still the one request.
    await new Promise(resolve => setTimeout(resolve, 100));
    watcher.dispose();
    lab.watch().dispose();
    expect(server.requests).toHaveLength(1);
    lab.dispose();
  });

  it('keeps the view and tells who listens', async () => {
    const server = fakeServer(() => lab3Machines());
    const lab = new LabModel({ serverSettings: server.settings });
    const changed = new Promise(resolve => lab.changed.connect(resolve));

    const watcher = lab.watch();
    await changed;

    expect(lab.configured).toBe(true);
    expect(lab.view?.nodes.map(node => node.host)).toEqual([
      'node-1',
      'node-2',
      'node-3'
    ]);
    expect(lab.failure).toBeNull();
    watcher.dispose();
    lab.dispose();
  });
});

describe('the panel', () => {
  it('asks for the lab only while shown and set to show it', async () => {
    const lab = new LabModel({
      serverSettings: fakeServer(() => lab3Machines()).settings
    });
    let watching = 0;
    jest.spyOn(lab, 'watch').mockImplementation(() => {
      watching++;
      return new DisposableDelegate(() => watching--);
    });
    const model = new GpuModel({ serverSettings: a5000Server().settings });
    const panel = new GpuMonitorPanel({
      model,
      lab,
      actions: fakeActions(),
      translator: nullTranslator
    });
    panel.hide();
    Widget.attach(panel, document.body);
    expect(watching).toBe(0);

    panel.show();
    expect(watching).toBe(1);
    panel.showLab = false;
    expect(watching).toBe(0);
    panel.showLab = true;
    expect(watching).toBe(1);
    panel.hide();
    expect(watching).toBe(0);
    panel.showLab = false;
    panel.show();
    expect(watching).toBe(0);

    panel.dispose();
    model.dispose();
    lab.dispose();
  });
});

describe('the ledger', () => {
  it("says who held GPUs for nothing, per user and per notebook, the user's own marked", () => {
    const onSeconds = jest.fn();
    const { getByRole, getByText } = render(
      <LedgerTable
        ledger={labLedger1h()}
        seconds={LEDGER_PERIODS.week}
        onSeconds={onSeconds}
        trans={trans}
      />
    );

    expect(getByText(/^1 notebook held/).textContent).toBe(
      "1 notebook held 0.0 GPU-hours at under 30 %; the largest: ana's train.ipynb, 0.0."
    );
    const notebooks = getByRole('table', { name: 'GPU-hours per notebook' });
    expect(
      within(notebooks)
        .getAllByRole('row')
        .map(row => row.textContent)
    ).toEqual(['NotebookBusyIdle-held', 'ana · train.ipynb (you)0.00.0']);
    const users = getByRole('table', { name: 'GPU-hours per user' });
    expect(within(users).getByRole('rowheader').textContent).toBe('ana (you)');

    fireEvent.change(getByRole('combobox', { name: 'Period' }), {
      target: { value: String(LEDGER_PERIODS.month) }
    });
    expect(onSeconds).toHaveBeenCalledWith(LEDGER_PERIODS.month);
  });

  it('is asked for only by a watcher that shows it, for the period it shows', async () => {
    const server = fakeServer(request =>
      endpoint(request) === 'lab/ledger' ? labLedger1h() : lab3Machines()
    );
    const lab = new LabModel({ serverSettings: server.settings });
    const answered = () => new Promise(resolve => lab.changed.connect(resolve));

    let changed = answered();
    const panel = lab.watch();
    await changed;
    expect(server.requests.map(endpoint)).toEqual(['lab']);

    changed = answered();
    const tab = lab.watch({ ledger: true });
    await changed;
    const asked = server.requests.map(request => requestedUrl(request));
    expect(asked.map(url => url.searchParams.get('since'))).toEqual([
      null,
      null,
      String(LEDGER_PERIODS.week)
    ]);
    // The period of the recorded answer (an hour) is not the one asked for:
    // not shown as the week's.
    expect(lab.ledger).toBeNull();

    lab.ledgerSeconds = 3600;
    await answered();
    expect(lab.ledger?.notebooks).toHaveLength(1);
    tab.dispose();
    panel.dispose();
    lab.dispose();
  });
});
