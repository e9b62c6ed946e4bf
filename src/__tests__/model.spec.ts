/**
 * @jest-environment node
 */
import { GpuModel } from '../gpu/model';
import {
  a5000History,
  a5000KernelSnapshot,
  a5000Kernels,
  a5000Snapshot,
  driverNotLoadedSnapshot,
  repeatedHistory
} from './payloads';
import {
  a5000Server,
  endpoint,
  fakeServer,
  jsonResponse,
  requestedUrl
} from './server';

/**
 * The `since` each history request asked for; null where it asked for all.
 */
function sinces(requests: Request[]): (string | null)[] {
  return requests
    .filter(request => endpoint(request) === 'gpus/history')
    .map(request => requestedUrl(request).searchParams.get('since'));
}

describe('GpuModel', () => {
  let model: GpuModel;

  afterEach(() => {
    model.dispose();
  });

  it('asks the server nothing while nobody watches', async () => {
    const server = a5000Server();
    model = new GpuModel({ serverSettings: server.settings });

    await model.refresh();

    expect(server.requests).toHaveLength(0);
    expect(model.snapshot).toBeNull();
  });

  it('answers one read when nobody watches, then stands by again', async () => {
    const server = a5000Server();
    model = new GpuModel({ serverSettings: server.settings });

    await model.read();
    const asked = server.requests.length;
    await model.refresh();

    expect(asked).toBe(1);
    expect(model.snapshot?.gpus).toHaveLength(2);
    expect(server.requests).toHaveLength(asked);
  });

  it('reads only the snapshot for a watcher without charts', async () => {
    const server = a5000Server(a5000History());
    model = new GpuModel({ serverSettings: server.settings });
    const changed = jest.fn();
    model.changed.connect(changed);

    model.watch();
    await model.refresh();

    expect(server.requests.map(endpoint)).not.toContain('gpus/history');
    expect(model.snapshot?.gpus.map(gpu => gpu.name)).toEqual([
      'NVIDIA RTX A5000',
      'NVIDIA RTX A5000'
    ]);
    expect(model.history.timestamps).toHaveLength(0);
    expect(changed).toHaveBeenCalled();
  });

  it('asks for the whole history first, then only for what came after its newest reading', async () => {
    const first = a5000History();
    const newest = first.timestamps[first.timestamps.length - 1];
    const server = a5000Server(first, repeatedHistory(newest + 1, 1));
    model = new GpuModel({ serverSettings: server.settings });
    const historyChanged = jest.fn();
    model.historyChanged.connect(historyChanged);

    model.watch({ history: true });
    await model.refresh();
    await model.refresh();

    expect(sinces(server.requests)).toEqual([null, `${newest}`]);
    expect(model.history.timestamps).toHaveLength(43 + 1);
    expect(historyChanged).toHaveBeenCalledTimes(2);
  });

  it('stops asking for the history when the charts are hidden, and resumes with since= and a gap', async () => {
    const first = repeatedHistory(1000, 10);
    // Readings the server took while the charts were hidden, after a pause
    // in which nobody watched.
    const missed = repeatedHistory(1100, 5);
    const server = a5000Server(first, missed);
    model = new GpuModel({ serverSettings: server.settings });
    model.watch();

    const charts = model.watch({ history: true });
    await model.refresh();
    charts.dispose();
    await model.refresh();
    expect(sinces(server.requests)).toEqual([null]);

    model.watch({ history: true });
    await model.refresh();

    expect(sinces(server.requests)).toEqual([null, '1009']);
    const { timestamps } = model.history;
    expect(timestamps).toHaveLength(10 + 1 + 5);
    expect(model.history.gpus[0].values.utilization_gpu[10]).toBeNull();
  });

  it("asks for this server's kernels only while a watcher shows them, in the same poll", async () => {
    const server = fakeServer(request =>
      endpoint(request) === 'kernels' ? a5000Kernels() : a5000KernelSnapshot()
    );
    model = new GpuModel({ serverSettings: server.settings });

    const snapshotOnly = model.watch();
    await model.refresh();
    expect(server.requests.map(endpoint)).toEqual(['gpus']);
    expect(model.kernels).toBeNull();

    const kernels = model.watch({ kernels: true });
    await model.refresh();
    expect(server.requests.map(endpoint).slice(1)).toEqual(['gpus', 'kernels']);
    expect(model.kernels?.map(kernel => kernel.session_path)).toEqual([
      'train.ipynb',
      'idle.ipynb'
    ]);

    kernels.dispose();
    await model.refresh();
    expect(server.requests.map(endpoint).slice(3)).toEqual(['gpus']);
    snapshotOnly.dispose();
  });

  it('stops polling once its last watcher is gone', async () => {
    const server = a5000Server();
    model = new GpuModel({ serverSettings: server.settings });

    const watcher = model.watch();
    await model.refresh();
    const asked = server.requests.length;
    watcher.dispose();
    await model.refresh();

    expect(asked).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(asked);
  });

  it('keeps the error a server without a working driver reports', async () => {
    const server = fakeServer(() => driverNotLoadedSnapshot());
    model = new GpuModel({ serverSettings: server.settings });

    model.watch();
    await model.refresh();

    expect(model.failure).toBeNull();
    expect(model.snapshot?.error?.kind).toBe('driver_not_loaded');
    expect(model.snapshot?.gpus).toEqual([]);
  });

  it('says the server extension is missing on a 404, keeps the last snapshot, and recovers', async () => {
    let enabled = true;
    const server = fakeServer(() =>
      enabled
        ? a5000Snapshot()
        : jsonResponse({ message: 'Not Found', reason: null }, 404)
    );
    model = new GpuModel({ serverSettings: server.settings });
    model.watch();
    await model.refresh();

    enabled = false;
    await model.refresh();
    expect(model.failure).toEqual({
      kind: 'not_enabled',
      message: 'Not Found',
      status: 404
    });
    expect(model.snapshot?.gpus).toHaveLength(2);

    enabled = true;
    await model.refresh();
    expect(model.failure).toBeNull();
  });

  it('tells an unreachable server from a slow one', async () => {
    const unreachable = fakeServer(() => {
      throw new TypeError('Failed to fetch');
    });
    model = new GpuModel({ serverSettings: unreachable.settings });
    model.watch();
    await model.refresh();
    expect(model.failure?.kind).toBe('network');
    model.dispose();

    const hanging = fakeServer(
      request =>
        new Promise((_, reject) => {
          request.signal.addEventListener('abort', () =>
            reject(new Error('aborted'))
          );
        })
    );
    model = new GpuModel({
      serverSettings: hanging.settings,
      requestTimeoutSeconds: 0.05
    });
    model.watch();
    await model.refresh();
    expect(model.failure?.kind).toBe('timeout');
  });

  it('sends one request at a time however often it is refreshed', async () => {
    let answer = (): void => undefined;
    const server = fakeServer(
      () =>
        new Promise(resolve => {
          answer = () => resolve(a5000Snapshot());
        })
    );
    model = new GpuModel({ serverSettings: server.settings });
    model.watch();
    const refreshes = [model.refresh(), model.refresh(), model.refresh()];
    await new Promise(resolve => setTimeout(resolve, 20));
    answer();
    await Promise.all(refreshes);

    expect(server.requests).toHaveLength(1);
  });

  it('asks seldom, and says so, while only the status bar and the alerts watch', async () => {
    const server = a5000Server(a5000History());
    model = new GpuModel({ serverSettings: server.settings });
    const everies = () =>
      server.requests.map(request => [
        endpoint(request),
        requestedUrl(request).searchParams.get('every')
      ]);

    const statusBar = model.watch({ seldom: true });
    const kernelItem = model.watch({ kernels: true, seldom: true });
    await model.refresh();

    expect(model.askingEverySeconds).toBe(5);
    expect(everies()).toEqual(
      expect.arrayContaining([
        ['gpus', '5'],
        ['kernels', '5']
      ])
    );

    // The panel opens: every second, and the server's own pace.
    const panel = model.watch({ history: true, kernels: true });
    server.requests.length = 0;
    await model.refresh();
    expect(model.askingEverySeconds).toBe(1);
    expect(everies().every(([, every]) => every === null)).toBe(true);

    // It closes: seldom again, at the interval the settings give.
    panel.dispose();
    model.seldomIntervalSeconds = 10;
    server.requests.length = 0;
    await model.refresh();
    expect(everies()).toContainEqual(['gpus', '10']);
    statusBar.dispose();
    kernelItem.dispose();
  });

  it('never asks seldom more often than the refresh interval', () => {
    const server = a5000Server();
    model = new GpuModel({
      serverSettings: server.settings,
      refreshIntervalSeconds: 8
    });
    const watcher = model.watch({ seldom: true });
    expect(model.askingEverySeconds).toBe(8);
    model.seldomIntervalSeconds = 20;
    expect(model.askingEverySeconds).toBe(20);
    watcher.dispose();
  });

  it('applies a new refresh interval and reports the kernel GPUs it is told', () => {
    const server = a5000Server();
    model = new GpuModel({
      serverSettings: server.settings,
      refreshIntervalSeconds: 2
    });
    const changed = jest.fn();
    model.changed.connect(changed);

    model.refreshIntervalSeconds = 5;
    model.kernelGpus = { label: 'train.ipynb', indices: [1] };

    expect(model.refreshIntervalSeconds).toBe(5);
    expect(model.kernelGpus.indices).toEqual([1]);
    expect(changed).toHaveBeenCalledTimes(1);
  });
});
