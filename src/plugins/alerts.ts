import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The alerts watch the readings from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { DEFAULT_ALERT_THRESHOLDS, IAlertThresholds } from '../alerts/alerts';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { AlertNotifier } from '../alerts/alertNotifier';
import { IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';
import { followSettings } from './settings';

/**
 * Raises a notification when a GPU's memory, temperature or idleness crosses
 * a threshold of the settings, once per episode, and when the GPUs can no
 * longer be read (see {@link AlertNotifier}).
 */
export const alertsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:alerts',
  description:
    'Notifies when a GPU is nearly out of memory, too hot, or idle for minutes while holding memory, and when the GPUs can no longer be read; once per episode, thresholds in the settings.',
  autoStart: true,
  requires: [IGpuMonitorModel],
  optional: [ISettingRegistry, ITranslator, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    registry: ISettingRegistry | null,
    translator: ITranslator | null,
    state: IStateDB | null
  ): void => {
    const notifier = new AlertNotifier({
      model,
      commands: app.commands,
      serverSettings: app.serviceManager.serverSettings,
      trans: (translator ?? nullTranslator).load(TRANSLATION_DOMAIN),
      state
    });
    void followSettings(registry, alertsPlugin.id, loaded => {
      notifier.configure(loaded.composite as unknown as IAlertThresholds);
    }).then(loaded => {
      notifier.settings = loaded;
      if (loaded === null) {
        notifier.configure(DEFAULT_ALERT_THRESHOLDS);
      }
    });
  }
};
