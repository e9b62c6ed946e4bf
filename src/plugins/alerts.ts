import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';

// The alerts watch the readings from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import {
  DEFAULT_ALERT_THRESHOLDS,
  ENABLED_SETTING,
  GpuAlertKind,
  GpuAlerts,
  IGpuAlert,
  IAlertThresholds,
  NotificationKind,
  SourceHealth
} from '../gpu/alerts';
// The model plugin's gpu/model, which reads from the start, imports it already.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { describeFailure } from '../gpu/failure';
import { fetchKernels } from '../api';
import { notificationText, WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import { CommandIDs, IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';
import { followSettings } from './settings';

/**
 * Where the alerts keep the episodes they reported, between loads of the
 * page.
 */
const FIRING_STATE = 'jupyterlab-gpu-monitor:alerts:firing';

/**
 * Raises a notification when a GPU's memory, temperature or idleness crosses
 * a threshold of the settings, once per episode (by default only about GPUs
 * this server's kernels use; not again on the next load of the page while
 * it lasts), each with "Don't show again" and a link to the settings; and
 * one when the GPUs stop being readable, one when they are back. One
 * notification per kind of alert: a new episode replaces the notification
 * of its kind. Warnings close by themselves; errors (a lost GPU, GPUs that
 * can no longer be read) stay until closed.
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
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const alerts = new GpuAlerts();
    const health = new SourceHealth();
    // The episodes the last load of the page reported; readings wait for them.
    let saved: string[] | null = null;
    void (state?.fetch(FIRING_STATE) ?? Promise.resolve(undefined)).then(
      value => {
        saved = Array.isArray(value) ? value.map(String) : [];
        alerts.restore(saved);
      },
      () => {
        saved = [];
      }
    );
    // The "can no longer be read" notification, dismissed when they are back.
    let lostNotice: string | null = null;
    // The notification of each kind of alert, and the alerts it names.
    const notices = new NotificationSlots();
    const named = new Map<GpuAlertKind, IGpuAlert[]>();
    let settings: ISettingRegistry.ISettings | null = null;
    // The alerts poll only while one of them is on.
    let watcher: IDisposable | null = null;
    const apply = (thresholds: IAlertThresholds): void => {
      alerts.thresholds = thresholds;
      if (alerts.enabled && watcher === null) {
        watcher = model.watch({ seldom: true });
      } else if (!alerts.enabled && watcher !== null) {
        watcher.dispose();
        watcher = null;
      }
    };
    const openPanel = {
      label: trans.__('Open GPU Monitor'),
      caption: trans.__('Show the GPU Monitor side panel'),
      callback: () => {
        void app.commands.execute(CommandIDs.openPanel);
      }
    };
    const openSettings = {
      label: trans.__('Settings'),
      caption: trans.__('Change the thresholds of the GPU alerts'),
      callback: () => {
        void app.commands.execute('settingeditor:open', {
          query: trans.__('GPU Monitor: alerts')
        });
      }
    };
    const mute = (kind: NotificationKind) => ({
      label: trans.__("Don't show again"),
      caption: trans.__(
        'Turn this kind of GPU notification off in the settings'
      ),
      callback: () => {
        settings?.set(ENABLED_SETTING[kind], false)?.catch(reason => {
          console.error('Failed to switch the GPU alert off.', reason);
        });
      }
    });
    // Where a notification has actions of its own, the mute alone beside
    // them: more buttons would crowd them out.
    const actionsOf = (
      kind: NotificationKind,
      own: Notification.IAction[] = []
    ) =>
      [
        ...own,
        own.length === 0 && app.commands.hasCommand(CommandIDs.openPanel)
          ? openPanel
          : null,
        settings !== null ? mute(kind) : null,
        own.length === 0 && app.commands.hasCommand('settingeditor:open')
          ? openSettings
          : null
      ].filter(action => action !== null);

    model.changed.connect(() => {
      if (watcher === null || saved === null) {
        return;
      }
      const change = health.update(model.snapshot, model.failure);
      if (!alerts.thresholds.readFailureEnabled) {
        // Switched off: what is shown goes with it.
        if (lostNotice !== null) {
          Notification.dismiss(lostNotice);
          lostNotice = null;
        }
      } else if (change === 'lost') {
        const reason = model.failure
          ? describeFailure(model.failure, trans).message
          : (model.snapshot?.error?.message ?? '');
        lostNotice = Notification.error(
          notificationText(
            trans.__('The GPUs can no longer be read: %1', reason)
          ),
          { autoClose: false, actions: actionsOf('readFailure') }
        );
      } else if (change === 'back') {
        if (lostNotice !== null) {
          Notification.dismiss(lostNotice);
          lostNotice = null;
        }
        Notification.success(trans.__('The GPUs can be read again.'), {
          autoClose: 5000,
          actions: actionsOf('readFailure')
        });
      }
      if (model.snapshot === null) {
        return;
      }
      const started = alerts.update(model.snapshot);
      const firing = alerts.firing;
      if (state && firing.join('\n') !== saved.join('\n')) {
        saved = firing;
        state.save(FIRING_STATE, firing).catch(reason => {
          console.error('Failed to keep the GPU alerts under way.', reason);
        });
      }
      if (started.length === 0) {
        return;
      }
      // The words of the alerts load with the first of them; an idle GPU's
      // alert asks once what its kernel is doing.
      const idle = started.some(alert => alert.holder?.kernelId);
      Promise.all([
        import('../gpu/alertMessages'),
        import('../gpu/alertActions'),
        idle
          ? fetchKernels(app.serviceManager.serverSettings).catch(() => null)
          : Promise.resolve(null)
      ]).then(
        ([{ alertNotices }, { holderActions }, kernels]) => {
          const shownBefore = new Map(
            [...named].filter(([kind]) => notices.has(kind))
          );
          for (const { kind, alerts: shown, message } of alertNotices(
            started,
            shownBefore,
            alert => alerts.isFiring(alert),
            alerts.thresholds,
            trans,
            kernels
          )) {
            named.set(kind, shown);
            // A lost GPU needs someone to act; the others are warnings.
            notices.show(kind, kind === 'lost' ? 'error' : 'warning', message, {
              autoClose: kind === 'lost' ? false : WARNING_AUTO_CLOSE_MS,
              actions: actionsOf(
                kind,
                holderActions(shown, app.commands, trans)
              )
            });
          }
        },
        reason => {
          console.error('Failed to load the words of the GPU alerts.', reason);
        }
      );
    });

    void followSettings(registry, alertsPlugin.id, loaded => {
      apply(loaded.composite as unknown as IAlertThresholds);
    }).then(loaded => {
      settings = loaded;
      if (loaded === null) {
        apply(DEFAULT_ALERT_THRESHOLDS);
      }
    });
  }
};
