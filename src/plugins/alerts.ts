import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';

// The alerts watch the readings from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import {
  alertMessages,
  DEFAULT_ALERT_THRESHOLDS,
  GpuAlerts,
  IAlertThresholds
} from '../gpu/alerts';
import { CommandIDs, IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';
import { followSettings } from './settings';

/**
 * Raises a notification when a GPU's memory, temperature or idleness crosses
 * a threshold of the settings, once per episode.
 */
export const alertsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:alerts',
  description:
    'Notifies when a GPU is nearly out of memory, too hot, or idle for minutes while holding memory; once per episode, thresholds in the settings.',
  autoStart: true,
  requires: [IGpuMonitorModel],
  optional: [ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    registry: ISettingRegistry | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const alerts = new GpuAlerts();
    // The alerts poll only while one of them is on.
    let watcher: IDisposable | null = null;
    const apply = (thresholds: IAlertThresholds): void => {
      alerts.thresholds = thresholds;
      if (alerts.enabled && watcher === null) {
        watcher = model.watch();
      } else if (!alerts.enabled && watcher !== null) {
        watcher.dispose();
        watcher = null;
      }
    };

    model.changed.connect(() => {
      if (watcher === null || model.snapshot === null) {
        return;
      }
      const started = alerts.update(model.snapshot);
      const actions = app.commands.hasCommand(CommandIDs.openPanel)
        ? [
            {
              label: trans.__('Open GPU Monitor'),
              caption: trans.__('Show the GPU Monitor side panel'),
              callback: () => {
                void app.commands.execute(CommandIDs.openPanel);
              }
            }
          ]
        : [];
      for (const message of alertMessages(started, alerts.thresholds, trans)) {
        Notification.warning(message, { autoClose: false, actions });
      }
    });

    void followSettings(registry, alertsPlugin.id, settings => {
      apply(settings.composite as unknown as IAlertThresholds);
    }).then(settings => {
      if (settings === null) {
        apply(DEFAULT_ALERT_THRESHOLDS);
      }
    });
  }
};
