import { ReactWidget } from '@jupyterlab/ui-components';
import { IDisposable } from '@lumino/disposable';
import { Message } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';

/**
 * A side panel that watches what it shows only while someone can see it:
 * shown, or attached visible as on a restored layout, it starts watching and
 * renders; hidden or detached, it stops, so that a closed panel costs no
 * polling. Until first shown it renders nothing, so that JupyterLab starts
 * without building its content.
 */
export abstract class WatchingPanel extends ReactWidget {
  /**
   * Stop watching, and drop the connections made to this panel.
   */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopWatching();
    Signal.disconnectReceiver(this);
    super.dispose();
  }

  /**
   * Whether the panel has been shown once: before, it renders nothing.
   */
  protected get shown(): boolean {
    return this._shown;
  }

  /**
   * Start watching what the panel shows.
   *
   * @returns what stops each watch
   */
  protected abstract watch(): IDisposable[];

  /**
   * Render again after a change, if anyone can see it: connect the signals
   * of what the panel shows to this.
   */
  protected onSourceChanged(): void {
    if (this.isVisible) {
      this.update();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._startWatching();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this._startWatching();
    }
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._stopWatching();
  }

  protected onBeforeDetach(msg: Message): void {
    this._stopWatching();
    super.onBeforeDetach(msg);
  }

  private _startWatching(): void {
    this._shown = true;
    if (this._watchers === null) {
      this._watchers = this.watch();
    }
    this.update();
  }

  private _stopWatching(): void {
    this._watchers?.forEach(watcher => watcher.dispose());
    this._watchers = null;
  }

  private _watchers: IDisposable[] | null = null;
  private _shown = false;
}
