import { Notification } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { IDisposable } from '@lumino/disposable';

import { fetchKernels } from '../api';
import { notificationText, WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import { CommandIDs, IGpuMonitorModel } from '../tokens';
import {
  ALERTS,
  GpuAlertKind,
  GpuAlerts,
  IAlertThresholds,
  IGpuAlert,
  SourceHealth
} from './alerts';
import { describeFailure } from '../gpu/failure';

/**
 * Where the alerts keep the episodes they reported, between loads of the
 * page.
 */
export const FIRING_STATE = 'jupyterlab-gpu-monitor:alerts:firing';

/**
 * Raises a notification when a GPU's memory, temperature or idleness crosses
 * a threshold, once per episode (not again on the next load of the page while
 * it lasts: the episodes are kept in the state database), each with "Don't
 * show again" and a link to the settings; and one when the GPUs stop being
 * readable, one when they are back. One notification per kind of alert: a
 * new episode replaces the notification of its kind. Warnings close by
 * themselves; errors (a lost GPU, GPUs that can no longer be read) stay until
 * closed. It watches the model only while an alert is on.
 */
export class AlertNotifier implements IDisposable {
  constructor(options: AlertNotifier.IOptions) {
    this._model = options.model;
    this._commands = options.commands;
    this._serverSettings = options.serverSettings;
    this._trans = options.trans;
    this._state = options.state;
    void (this._state?.fetch(FIRING_STATE) ?? Promise.resolve(undefined)).then(
      value => {
        this._saved = Array.isArray(value) ? value.map(String) : [];
        this._alerts.restore(this._saved);
      },
      () => {
        this._saved = [];
      }
    );
    this._model.changed.connect(this._onChanged, this);
  }

  /**
   * Whether it is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * The settings its "Don't show again" switches off; null (no settings
   * registry) leaves that button out.
   */
  settings: ISettingRegistry.ISettings | null = null;

  /**
   * Use these thresholds and switches from now on.
   */
  configure(thresholds: IAlertThresholds): void {
    this._alerts.thresholds = thresholds;
    if (this._alerts.enabled && this._watcher === null) {
      this._watcher = this._model.watch({ seldom: true });
    } else if (!this._alerts.enabled && this._watcher !== null) {
      this._watcher.dispose();
      this._watcher = null;
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._model.changed.disconnect(this._onChanged, this);
    this._watcher?.dispose();
    this._watcher = null;
  }

  private _onChanged(): void {
    const saved = this._saved;
    if (this._watcher === null || saved === null) {
      return; // off, or the episodes of the last load not known yet
    }
    this._showReadFailure();
    const snapshot = this._model.snapshot;
    if (snapshot === null) {
      return;
    }
    const started = this._alerts.update(snapshot);
    const firing = this._alerts.firing;
    if (this._state && firing.join('\n') !== saved.join('\n')) {
      this._saved = firing;
      this._state.save(FIRING_STATE, firing).catch(reason => {
        console.error('Failed to keep the GPU alerts under way.', reason);
      });
    }
    if (started.length > 0) {
      void this._notify(started);
    }
  }

  /**
   * "The GPUs can no longer be read", until they can; gone when switched off.
   */
  private _showReadFailure(): void {
    const trans = this._trans;
    const model = this._model;
    const change = this._health.update(model.snapshot, model.failure);
    if (!this._alerts.thresholds.readFailureEnabled || change === 'back') {
      if (this._lostNotice !== null) {
        Notification.dismiss(this._lostNotice);
        this._lostNotice = null;
      }
    }
    if (!this._alerts.thresholds.readFailureEnabled) {
      return;
    }
    if (change === 'lost') {
      const reason = model.failure
        ? describeFailure(model.failure, trans).message
        : (model.snapshot?.error?.message ?? '');
      this._lostNotice = Notification.error(
        notificationText(
          trans.__('The GPUs can no longer be read: %1', reason)
        ),
        { autoClose: false, actions: this._actions('readFailureEnabled') }
      );
    } else if (change === 'back') {
      Notification.success(trans.__('The GPUs can be read again.'), {
        autoClose: 5000,
        actions: this._actions('readFailureEnabled')
      });
    }
  }

  /**
   * The notifications of the alerts that started. Their words load with the
   * first of them; an idle GPU's alert asks once what its kernel is doing.
   */
  private async _notify(started: IGpuAlert[]): Promise<void> {
    const idle = started.some(alert => alert.holder?.kernelId);
    let loaded;
    try {
      loaded = await Promise.all([
        import('./alertMessages'),
        idle
          ? fetchKernels(this._serverSettings).catch(() => null)
          : Promise.resolve(null)
      ]);
    } catch (reason) {
      console.error('Failed to load the words of the GPU alerts.', reason);
      return;
    }
    const [{ ALERT_NOTICES, alertNotices }, kernels] = loaded;
    const shownBefore = new Map(
      [...this._named].filter(([kind]) => this._notices.has(kind))
    );
    for (const { kind, alerts: shown, message } of alertNotices(
      started,
      shownBefore,
      alert => this._alerts.isFiring(alert),
      this._alerts.thresholds,
      this._trans,
      kernels
    )) {
      this._named.set(kind, shown);
      const notice = ALERT_NOTICES[kind];
      this._notices.show(kind, notice.type, message, {
        autoClose: notice.type === 'error' ? false : WARNING_AUTO_CLOSE_MS,
        actions: this._actions(
          ALERTS[kind].enabledBy,
          notice.actions?.(shown, this._commands, this._trans)
        )
      });
    }
  }

  /**
   * A notification's buttons: where it has actions of its own, the mute alone
   * beside them (more buttons would crowd them out); else open the panel,
   * mute, and the settings. The mute turns `enabledBy` off.
   */
  private _actions(
    enabledBy: keyof IAlertThresholds,
    own: Notification.IAction[] = []
  ): Notification.IAction[] {
    const trans = this._trans;
    const commands = this._commands;
    const settings = this.settings;
    const actions: (Notification.IAction | null)[] = [
      ...own,
      own.length === 0 && commands.hasCommand(CommandIDs.openPanel)
        ? {
            label: trans.__('Open GPU Monitor'),
            caption: trans.__('Show the GPU Monitor side panel'),
            callback: () => {
              void commands.execute(CommandIDs.openPanel);
            }
          }
        : null,
      settings !== null
        ? {
            label: trans.__("Don't show again"),
            caption: trans.__(
              'Turn this kind of GPU notification off in the settings'
            ),
            callback: () => {
              settings.set(enabledBy, false)?.catch(reason => {
                console.error('Failed to switch the GPU alert off.', reason);
              });
            }
          }
        : null,
      own.length === 0 && commands.hasCommand('settingeditor:open')
        ? {
            label: trans.__('Settings'),
            caption: trans.__('Change the thresholds of the GPU alerts'),
            callback: () => {
              void commands.execute('settingeditor:open', {
                query: trans.__('GPU Monitor: alerts')
              });
            }
          }
        : null
    ];
    return actions.filter(action => action !== null);
  }

  private _model: IGpuMonitorModel;
  private _commands: CommandRegistry;
  private _serverSettings: ServerConnection.ISettings;
  private _trans: TranslationBundle;
  private _state: IStateDB | null;
  private _alerts = new GpuAlerts();
  private _health = new SourceHealth();
  // The episodes the last load of the page reported; readings wait for them.
  private _saved: string[] | null = null;
  // The "can no longer be read" notification, dismissed when they are back.
  private _lostNotice: string | null = null;
  // The notification of each kind of alert, and the alerts it names.
  private _notices = new NotificationSlots();
  private _named = new Map<GpuAlertKind, IGpuAlert[]>();
  private _watcher: IDisposable | null = null;
  private _isDisposed = false;
}

/**
 * The namespace of {@link AlertNotifier}.
 */
export namespace AlertNotifier {
  /**
   * What it watches and where it acts.
   */
  export interface IOptions {
    model: IGpuMonitorModel;
    commands: CommandRegistry;
    serverSettings: ServerConnection.ISettings;
    trans: TranslationBundle;
    state: IStateDB | null;
  }
}
