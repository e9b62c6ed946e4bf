import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { KernelStatusItem } from '../components/KernelStatusItem';
import { IGpuMonitorModel } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { IKernelSummary } from '../restapi/kernels';
import { a5000KernelSnapshot, a5000Kernels } from './payloads';

/**
 * A model holding the recorded kernel snapshot (its machine) and kernels.
 */
function modelWith(
  snapshot: IGpuSnapshot,
  kernels: IKernelSummary[]
): IGpuMonitorModel & { changed: Signal<IGpuMonitorModel, void> } {
  const model = { snapshot, kernels } as unknown as IGpuMonitorModel & {
    changed: Signal<IGpuMonitorModel, void>;
  };
  model.changed = new Signal<IGpuMonitorModel, void>(model);
  return model;
}

describe('KernelStatusItem', () => {
  let item: KernelStatusItem;

  afterEach(() => {
    item.dispose();
  });

  /**
   * The item's text once rendered.
   */
  async function shown(): Promise<HTMLElement | null> {
    MessageLoop.flush();
    await item.renderPromise;
    return item.node.querySelector('span');
  }

  it("shows the current kernel's CPU and memory with its processes', and nothing without a kernel", async () => {
    const [train] = a5000Kernels();
    const kernels = [
      { ...train, cpu_percent: 387.4, memory_rss_mib: 9830, processes: 5 }
    ];
    item = new KernelStatusItem({
      model: modelWith(a5000KernelSnapshot(), kernels)
    });
    Widget.attach(item, document.body);
    expect(await shown()).toBeNull();

    item.kernelId = train.kernel_id;
    const text = (await shown())!;
    expect(text.textContent).toBe('Kernel: CPU 387 % · RAM 9.6 GiB');
    expect(text.title).toMatch(
      /^The kernel of train\.ipynb and the 4 processes it started/
    );
    expect(text.title).toMatch(/The machine's memory: .* in use\./);
    expect(item.hasClass('jp-mod-warn')).toBe(false);
  });

  it("warns while the container's memory is nearly full", async () => {
    const [train] = a5000Kernels();
    const snapshot = a5000KernelSnapshot();
    snapshot.machine = {
      ...snapshot.machine!,
      memory_scope: 'container',
      memory_used_mib: 3800,
      memory_total_mib: 4096
    };
    item = new KernelStatusItem({ model: modelWith(snapshot, [train]) });
    Widget.attach(item, document.body);
    item.kernelId = train.kernel_id;

    const text = (await shown())!;
    expect(item.hasClass('jp-mod-warn')).toBe(true);
    expect(text.title).toContain("The container's memory: 3.7 / 4.0 GiB");
    expect(text.title).toMatch(/Nearly full: the kernel may be killed/);
  });

  it('says how long the kernel has held GPU memory idle, once a minute has passed', async () => {
    const [train] = a5000Kernels();
    const snapshot = a5000KernelSnapshot();
    const since = train.gpus[0].idle_held_since!;
    const model = modelWith({ ...snapshot, timestamp: since + 30 }, [train]);
    item = new KernelStatusItem({ model });
    Widget.attach(item, document.body);
    item.kernelId = train.kernel_id;
    expect((await shown())!.textContent).toBe('Kernel: CPU 0 % · RAM 51 MiB');

    // Two hours on, the same kernel at the next read.
    (model as { snapshot: IGpuSnapshot }).snapshot = {
      ...snapshot,
      timestamp: since + 2 * 3600 + 30
    };
    model.changed.emit();
    expect((await shown())!.textContent).toBe(
      'Kernel: CPU 0 % · RAM 51 MiB · GPU idle 2 h'
    );
  });
});
