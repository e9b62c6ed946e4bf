import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

// The item is in the status bar from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { GpuStatusItem } from '../components/GpuStatusItem';
import { SummaryMode } from '../gpu/summary';
import { CommandIDs, IGpuMonitorModel } from '../tokens';
import { followCurrentKernel } from './currentKernel';
import { followSettings } from './settings';

/**
 * Adds a status bar item with the utilisation and memory of the GPU the
 * current notebook's kernel uses, else of the busiest GPU (or of all GPUs);
 * a click opens the GPU monitor panel.
 */
export const statusBarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:status-bar',
  description:
    "Adds a status bar item with the utilization and memory of the GPU the current notebook's kernel uses, else of the busiest GPU or of all GPUs; a click opens the GPU Monitor.",
  autoStart: true,
  requires: [IGpuMonitorModel],
  optional: [IStatusBar, ISettingRegistry, ITranslator, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    statusBar: IStatusBar | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null,
    notebooks: INotebookTracker | null
  ): void => {
    if (!statusBar) {
      return;
    }
    const item = new GpuStatusItem({
      model,
      translator,
      onOpen: () => {
        if (app.commands.hasCommand(CommandIDs.openPanel)) {
          void app.commands.execute(CommandIDs.openPanel);
        }
      }
    });
    if (notebooks) {
      followCurrentKernel(notebooks, kernelId => {
        item.kernelId = kernelId;
      });
    }
    const activeStateChanged = new Signal<GpuStatusItem, void>(item);
    // The item polls only while it is shown.
    let watcher: IDisposable | null = model.watch({ seldom: true });
    statusBar.registerStatusItem(statusBarPlugin.id, {
      item,
      align: 'left',
      rank: 100,
      isActive: () => watcher !== null,
      activeStateChanged
    });

    void followSettings(registry, statusBarPlugin.id, settings => {
      item.mode = settings.get('summary').composite as SummaryMode;
      const enabled = settings.get('enabled').composite as boolean;
      if (enabled !== (watcher !== null)) {
        watcher?.dispose();
        watcher = enabled ? model.watch({ seldom: true }) : null;
        activeStateChanged.emit();
      }
    });
  }
};
