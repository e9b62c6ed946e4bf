import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';

import { IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';

/**
 * A status bar item that shows the model's readings for the current
 * notebook's kernel: rendered again when the model changes or the kernel
 * does.
 */
export abstract class KernelFollowingItem extends ReactWidget {
  /**
   * Create the item, with its CSS class.
   */
  constructor(options: KernelFollowingItem.IOptions, className: string) {
    super();
    this.model = options.model;
    this.trans = (options.translator ?? nullTranslator).load(
      TRANSLATION_DOMAIN
    );
    this.addClass(className);
    this.model.changed.connect(this.update, this);
  }

  /**
   * The kernel of the current notebook; null when there is none.
   */
  get kernelId(): string | null {
    return this._kernelId;
  }
  set kernelId(kernelId: string | null) {
    if (kernelId !== this._kernelId) {
      this._kernelId = kernelId;
      this.update();
    }
  }

  /**
   * The model whose readings the item shows.
   */
  protected readonly model: IGpuMonitorModel;

  /**
   * The item's words, in the application's language.
   */
  protected readonly trans: TranslationBundle;

  private _kernelId: string | null = null;
}

/**
 * The types of {@link KernelFollowingItem}.
 */
export namespace KernelFollowingItem {
  /**
   * Where the item reads its figures.
   */
  export interface IOptions {
    /**
     * The model whose readings are shown.
     */
    model: IGpuMonitorModel;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
