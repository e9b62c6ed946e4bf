import { Widget } from '@lumino/widgets';

/**
 * The line under a code cell with the GPU figures of its last run, small
 * and quiet like an execution-time line, and a hint under it when the GPU
 * starved.
 */
export class CellGpuLine extends Widget {
  /**
   * Create an empty line; it shows nothing until given a text.
   */
  constructor() {
    super();
    this.addClass('jp-GpuMonitor-cellLine');
    this._text.className = 'jp-GpuMonitor-cellLineText';
    this._hint.className = 'jp-GpuMonitor-cellHint';
    this.node.append(this._text, this._hint);
    this.hide();
  }

  /**
   * Show a run's figures, or hide the line.
   *
   * @param text - the figures; null hides the line
   * @param details - the figures per GPU, shown on hover
   * @param hint - what to try when the GPU starved; null for none
   */
  render(text: string | null, details: string, hint: string | null): void {
    this._text.textContent = text ?? '';
    this._text.title = details;
    this._hint.textContent = hint ?? '';
    this._hint.hidden = hint === null;
    this.setHidden(text === null);
  }

  private _text = document.createElement('span');
  private _hint = document.createElement('div');
}
