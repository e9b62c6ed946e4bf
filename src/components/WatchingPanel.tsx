import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { LabIcon, ReactWidget } from '@jupyterlab/ui-components';
import { IDisposable } from '@lumino/disposable';
import { Message } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import * as React from 'react';

import { TRANSLATION_DOMAIN } from '../tokens';

/**
 * A side panel that watches what it shows only while someone can see it:
 * shown, or attached visible as on a restored layout, it starts watching and
 * renders; hidden or detached, it stops, so that a closed panel costs no
 * polling. Until first shown it renders nothing, so that JupyterLab starts
 * without building its content.
 */
export abstract class WatchingPanel extends ReactWidget {
  /**
   * Create the panel, named for the eye and for screen readers.
   */
  constructor(options: WatchingPanel.IOptions) {
    super();
    this.trans = (options.translator ?? nullTranslator).load(
      TRANSLATION_DOMAIN
    );
    const label = options.label(this.trans);
    this.id = options.id;
    this.addClass(options.className);
    this.title.icon = options.icon;
    if (options.area === 'main') {
      this.title.label = label;
      this.title.closable = true;
    } else {
      // A side panel's tab shows only its icon: the name is its tooltip.
      this.title.caption = label;
      this.node.setAttribute('role', 'region');
    }
    this.node.setAttribute('aria-label', label);
  }

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
   * The panel's words, in the application's language.
   */
  protected readonly trans: TranslationBundle;

  /**
   * Render content loaded on first use (the module of a panel's view is
   * fetched the first time it is shown, not while JupyterLab starts), with
   * what to say while it loads; nothing until the panel is first shown.
   */
  protected renderLoaded(
    loading: string,
    content: () => React.ReactElement
  ): React.ReactElement | null {
    if (!this._shown) {
      return null;
    }
    return (
      <React.Suspense
        fallback={
          <p className="jp-GpuMonitor-loading" role="status">
            {loading}
          </p>
        }
      >
        {content()}
      </React.Suspense>
    );
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

/**
 * The types of {@link WatchingPanel}.
 */
export namespace WatchingPanel {
  /**
   * Where the panel lives and what it is called.
   */
  export interface IOptions {
    /**
     * The widget's id, which the layout restorer keeps.
     */
    id: string;
    /**
     * The CSS class of the panel's node.
     */
    className: string;
    /**
     * The icon of the panel's tab.
     */
    icon: LabIcon;
    /**
     * The panel's name, in the panel's words.
     */
    label: (trans: TranslationBundle) => string;
    /**
     * A side panel (a tab of icons) or a main-area tab that can be closed.
     */
    area: 'side' | 'main';
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
