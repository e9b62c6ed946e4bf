import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { GpuStatusItem } from '../components/GpuStatusItem';
import { GpuModel } from '../gpu/model';
import { IGpuSnapshot } from '../restapi/gpus';
import {
  a5000KernelSnapshot,
  a5000Kernels,
  gb200LostSnapshot,
  v100sX8Snapshot
} from './payloads';
import { a5000Server, endpoint, fakeServer, jsonResponse } from './server';

describe('GpuStatusItem', () => {
  let model: GpuModel;
  let item: GpuStatusItem;

  afterEach(() => {
    item.dispose();
    model.dispose();
  });

  /**
   * The item attached, its model having read `snapshot` from the server.
   */
  async function showing(snapshot: IGpuSnapshot): Promise<void> {
    await answered(() => snapshot);
  }

  /**
   * The item attached, its model having read what the server answered to
   * `gpus` (any other request is not found).
   */
  async function answered(gpus: () => unknown): Promise<void> {
    const server = fakeServer(request =>
      endpoint(request) === 'gpus' ? gpus() : jsonResponse({}, 404)
    );
    model = new GpuModel({ serverSettings: server.settings });
    item = new GpuStatusItem({ model, onOpen: jest.fn() });
    Widget.attach(item, document.body);
    model.watch();
    await model.refresh();
  }

  /**
   * The item's button once rendered.
   */
  async function button(): Promise<HTMLButtonElement> {
    MessageLoop.flush();
    await item.renderPromise;
    return item.node.querySelector('button')!;
  }

  it('sums up the busiest GPU, or all of them, and opens the panel on click', async () => {
    model = new GpuModel({ serverSettings: a5000Server().settings });
    const onOpen = jest.fn();
    item = new GpuStatusItem({ model, onOpen });
    Widget.attach(item, document.body);
    expect((await button()).textContent).toBe('GPU …');

    model.watch();
    await model.refresh();
    expect((await button()).textContent).toBe(
      '2 GPUs · max 0 % · 21.9/24.0 GiB'
    );
    expect((await button()).title).toMatch(/^GPU 0, the busiest of 2/);

    item.mode = 'sum';
    expect((await button()).textContent).toBe(
      '2 GPUs · mean 0 % · 38.8/48.0 GiB'
    );
    expect(item.hasClass('jp-mod-error')).toBe(false);
    expect(item.hasClass('jp-mod-warn')).toBe(false);

    (await button()).click();
    expect(onOpen).toHaveBeenCalledTimes(1);
  });

  it('is marked as a warning, with why in its tooltip, while a GPU it counts is nearly out of memory', async () => {
    await showing(v100sX8Snapshot());

    expect((await button()).title).toMatch(
      /^GPUs 0, 3, 5, 6 are nearly out of memory/
    );
    expect(item.hasClass('jp-mod-warn')).toBe(true);
    expect(item.hasClass('jp-mod-error')).toBe(false);
  });

  it("follows the current notebook's kernel to the GPU it uses, marked as the kernel's", async () => {
    // The recorded train.ipynb kernel, here on GPU 1 only.
    const snapshot = a5000KernelSnapshot();
    snapshot.gpus[0].processes = [];
    await showing(snapshot);
    expect((await button()).textContent).toBe(
      '2 GPUs · max 0 % · 21.9/24.0 GiB'
    );
    expect(item.hasClass('jp-mod-kernel')).toBe(false);

    item.kernelId = a5000Kernels()[0].kernel_id;
    expect((await button()).textContent).toBe('GPU 1 · 0 % · 16.8/24.0 GiB');
    expect(item.hasClass('jp-mod-kernel')).toBe(true);

    item.kernelId = null;
    expect((await button()).textContent).toBe(
      '2 GPUs · max 0 % · 21.9/24.0 GiB'
    );
  });

  it('says a lost GPU is lost, as an error with its reset in the tooltip, whatever it would sum up', async () => {
    const snapshot = gb200LostSnapshot();
    await showing(snapshot);
    expect((await button()).textContent).toBe('⚠ GPU 1 lost');
    expect(item.hasClass('jp-mod-error')).toBe(true);
    expect((await button()).title).toMatch(
      /^GPU 1 is lost\n.*sudo nvidia-smi -r/s
    );
  });

  it('marks an error, with the reason as its tooltip, when the server fails', async () => {
    await answered(() =>
      jsonResponse({ message: 'Not Found', reason: null }, 404)
    );

    expect((await button()).textContent).toBe('⚠ GPU error');
    expect(item.hasClass('jp-mod-error')).toBe(true);
    expect((await button()).title).toBe(
      'The GPU monitor server extension is not enabled on this Jupyter server.'
    );
  });

  it('says "No GPU", calmly, on a machine without an NVIDIA driver', async () => {
    await answered(() => ({
      source: null,
      timestamp: 1,
      driver_version: null,
      cuda_version: null,
      gpus: [],
      error: {
        kind: 'not_installed',
        message:
          'NVML: NVML Shared Library Not Found; nvidia-smi was not found',
        hint: 'Install the NVIDIA driver.'
      }
    }));

    expect((await button()).textContent).toBe('No GPU');
    expect(item.hasClass('jp-mod-error')).toBe(false);
    expect((await button()).title).toMatch(/^NVML: NVML Shared Library/);
  });
});
