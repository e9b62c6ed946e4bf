import { Notification } from '@jupyterlab/apputils';
import { ReadonlyJSONValue } from '@lumino/coreutils';

/**
 * One notification per subject (a kind of alert, a notebook): news on a
 * subject replaces its notification while that one is still there, on the
 * screen or in the notification centre, instead of stacking a second one.
 */
export class NotificationSlots {
  /**
   * Show the news on a subject; the notification's id.
   */
  show(
    subject: string,
    type: Notification.TypeOptions,
    message: string,
    options: Notification.IOptions<ReadonlyJSONValue>
  ): string {
    const id = this._ids.get(subject);
    // Updating shows the toast again if it had closed by itself.
    if (
      id !== undefined &&
      Notification.update({ id, message, type, ...options })
    ) {
      return id;
    }
    const shown = Notification.emit(message, type, options);
    this._ids.set(subject, shown);
    return shown;
  }

  /**
   * Whether the notification on a subject is still there.
   */
  has(subject: string): boolean {
    const id = this._ids.get(subject);
    return id !== undefined && Notification.manager.has(id);
  }

  /**
   * Take the notification on a subject away, if it is still there.
   */
  dismiss(subject: string): void {
    const id = this._ids.get(subject);
    if (id !== undefined) {
      Notification.dismiss(id);
      this._ids.delete(subject);
    }
  }

  private _ids = new Map<string, string>();
}
