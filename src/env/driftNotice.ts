import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { IDisposable } from '@lumino/disposable';

import { notificationText, WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import { CommandIDs, IEnvironmentInspector, InspectorFinding } from '../tokens';

/**
 * Warns when the inspector finds that a kernel drifted from its notebook's
 * environment fingerprint: the notebook, the first change and how many more,
 * with "Update Fingerprint" (and "Show", where the Environment panel is). One
 * per notebook: a drift found again replaces the last one.
 */
export class DriftNotice implements IDisposable {
  constructor(
    inspector: IEnvironmentInspector,
    commands: CommandRegistry,
    trans: TranslationBundle
  ) {
    this._inspector = inspector;
    this._commands = commands;
    this._trans = trans;
    inspector.driftFound.connect(this._onDrift, this);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._inspector.driftFound.disconnect(this._onDrift, this);
  }

  private _onDrift(
    inspector: IEnvironmentInspector,
    drift: readonly InspectorFinding[]
  ): void {
    const trans = this._trans;
    const commands = this._commands;
    const label = inspector.target?.label ?? '';
    const actions = [
      {
        label: trans.__('Update Fingerprint'),
        caption: trans.__('Record the environment the kernel has now'),
        callback: () => {
          void commands.execute(CommandIDs.recordEnvironment);
        }
      }
    ];
    if (commands.hasCommand(CommandIDs.openEnvironmentPanel)) {
      actions.unshift({
        label: trans.__('Show'),
        caption: trans.__('Show the Environment side panel'),
        callback: () => {
          void commands.execute(CommandIDs.openEnvironmentPanel);
        }
      });
    }
    this._slots.show(label, 'warning', driftMessage(label, drift, trans), {
      autoClose: WARNING_AUTO_CLOSE_MS,
      actions
    });
  }

  private _inspector: IEnvironmentInspector;
  private _commands: CommandRegistry;
  private _trans: TranslationBundle;
  private _slots = new NotificationSlots();
  private _isDisposed = false;
}

/**
 * The drift notification: the notebook, the first change, how many more.
 */
export function driftMessage(
  label: string,
  drift: readonly InspectorFinding[],
  trans: TranslationBundle
): string {
  const [first, ...others] = drift;
  return notificationText(
    others.length === 0
      ? trans.__('%1: %2', label, first.title)
      : trans.__(
          '%1: %2, and %3 more differences',
          label,
          first.title,
          others.length
        )
  );
}
