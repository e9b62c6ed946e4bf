import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, WidgetTracker } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { showMainTab } from '../components/mainTab';
import type { LabPanel } from '../lab/LabPanel';
// The model is what this plugin provides (the panel's Lab section reads it);
// it asks the server only while a Lab view is shown.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { LabModel } from '../lab/model';
import { gpuIcon } from '../icons';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';
import {
  CommandIDs,
  ICellGpuRuns,
  ILabModel,
  PANEL_PLUGIN_ID,
  TRANSLATION_DOMAIN
} from '../tokens';
import { followSettings } from './settings';

/**
 * Provides the lab's machines (asked for only while a Lab view is shown)
 * and adds the GPU Lab, a main-area tab, with its command.
 */
export const labPlugin: JupyterFrontEndPlugin<ILabModel> = {
  id: 'jupyterlab-gpu-monitor:lab',
  description:
    "Adds the GPU Lab, a main-area tab: every machine of the lab from the lab's Prometheus (GpuMonitor.lab_prometheus_url), each as a row of its GPUs with who holds them, filters, and the best free GPU anywhere for the current notebook.",
  autoStart: true,
  provides: ILabModel,
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    ITranslator,
    ICellGpuRuns
  ],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null,
    cellRuns: ICellGpuRuns | null
  ): ILabModel => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const lab = new LabModel({
      serverSettings: app.serviceManager.serverSettings
    });
    // The panel's rule for the room a proposed GPU must have free.
    let minFreePercent: number = SETTINGS_DEFAULTS.panel.freeGpuMinFreePercent;
    void followSettings(registry, PANEL_PLUGIN_ID, settings => {
      minFreePercent = settings.get('freeGpuMinFreePercent')
        .composite as number;
    });
    const tracker = new WidgetTracker<LabPanel>({
      namespace: 'jupyterlab-gpu-monitor-lab'
    });
    app.commands.addCommand(CommandIDs.openLab, {
      label: trans.__('GPU Lab'),
      caption: trans.__(
        "Open the GPU Lab: every machine of the lab, from the lab's Prometheus, in the main area"
      ),
      icon: args => (args.isPalette ? undefined : gpuIcon),
      describedBy: { args: { type: 'object', properties: {} } },
      // The tab loads when first opened (or restored with the layout).
      execute: async () => {
        const { LabPanel } = await import('../lab/LabPanel');
        showMainTab(
          app,
          tracker,
          () =>
            new LabPanel({
              lab,
              cellRuns,
              minFreeShare: () => minFreePercent / 100,
              translator
            })
        );
      }
    });
    void restorer?.restore(tracker, {
      command: CommandIDs.openLab,
      name: () => 'gpu-lab'
    });
    palette?.addItem({
      command: CommandIDs.openLab,
      category: trans.__('GPU Monitor'),
      args: { isPalette: true }
    });
    return lab;
  }
};
