import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

import type { KernelStatusItem } from '../components/KernelStatusItem';
import { IGpuMonitorModel } from '../tokens';
import { followCurrentKernel } from './currentKernel';

/**
 * Adds a status bar item with the CPU and memory of the current notebook's
 * kernel and the processes it started, a warning while the machine's memory
 * is nearly full.
 */
export const kernelStatusPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:kernel-status-bar',
  description:
    "Adds a status bar item with the CPU and memory of the current notebook's kernel and the processes it started, marked while the machine's memory is nearly full.",
  autoStart: true,
  requires: [IGpuMonitorModel, INotebookTracker],
  optional: [IStatusBar, ITranslator],
  activate: async (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    notebooks: INotebookTracker,
    statusBar: IStatusBar | null,
    translator: ITranslator | null
  ): Promise<void> => {
    if (!statusBar) {
      return;
    }
    // Loaded after /lab opens: the item shows once a notebook's kernel runs.
    const { KernelStatusItem } = await import('../components/KernelStatusItem');
    const item = new KernelStatusItem({ model, translator });
    const activeStateChanged = new Signal<KernelStatusItem, void>(item);
    // The kernels are asked for only while a notebook with a kernel is current.
    let watcher: IDisposable | null = null;
    followCurrentKernel(notebooks, kernelId => {
      item.kernelId = kernelId;
      if ((kernelId !== null) !== (watcher !== null)) {
        watcher?.dispose();
        watcher =
          kernelId !== null
            ? model.watch({ kernels: true, seldom: true })
            : null;
        activeStateChanged.emit();
      }
    });
    statusBar.registerStatusItem(kernelStatusPlugin.id, {
      item,
      align: 'left',
      rank: 110,
      isActive: () => watcher !== null,
      activeStateChanged
    });
  }
};
