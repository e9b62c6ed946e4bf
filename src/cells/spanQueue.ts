import {
  ISpansAnswer,
  ISpanFigures,
  MAX_SPANS_PER_REQUEST
} from '../restapi/kernels';

/**
 * Asks the server for the GPU figures of cell runs, a kernel's runs that
 * end close together (a "Run All") in one request.
 */
export class SpanQueue {
  /**
   * Create a queue that sends with `options.send`.
   */
  constructor(options: SpanQueue.IOptions) {
    this._send = options.send;
    this._delayMs = options.delayMs ?? 250;
  }

  /**
   * The kernel's figures over a span.
   *
   * @returns the figures; null when the server could not give them (the
   *   kernel is gone, or the server failed)
   */
  measure(
    kernelId: string,
    span: { start: number; end: number }
  ): Promise<ISpanFigures | null> {
    return new Promise(resolve => {
      const queued = this._queued.get(kernelId) ?? [];
      queued.push({ span: { start: span.start, end: span.end }, resolve });
      this._queued.set(kernelId, queued);
      if (this._timer === null) {
        this._timer = setTimeout(() => this._flush(), this._delayMs);
      }
    });
  }

  /**
   * Send nothing more; what is queued resolves with null.
   */
  dispose(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    for (const queued of this._queued.values()) {
      queued.forEach(item => item.resolve(null));
    }
    this._queued.clear();
  }

  /**
   * Send what is queued: one request per kernel and per 2000 spans.
   */
  private _flush(): void {
    this._timer = null;
    const queued = this._queued;
    this._queued = new Map();
    for (const [kernelId, items] of queued) {
      for (let i = 0; i < items.length; i += MAX_SPANS_PER_REQUEST) {
        const batch = items.slice(i, i + MAX_SPANS_PER_REQUEST);
        this._send(
          kernelId,
          batch.map(item => item.span)
        ).then(
          answer =>
            batch.forEach((item, position) =>
              item.resolve(answer.spans[position] ?? null)
            ),
          () => batch.forEach(item => item.resolve(null))
        );
      }
    }
  }

  private _send: SpanQueue.IOptions['send'];
  private _delayMs: number;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _queued = new Map<string, Private.IQueued[]>();
}

/**
 * The types of {@link SpanQueue}.
 */
export namespace SpanQueue {
  /**
   * How to reach the server, and how long to gather runs.
   */
  export interface IOptions {
    /**
     * Ask the server for a kernel's figures over spans:
     * `POST kernels/<id>/spans`.
     */
    send: (
      kernelId: string,
      spans: { start: number; end: number }[]
    ) => Promise<ISpansAnswer>;
    /**
     * How long to gather runs before asking, in milliseconds.
     */
    delayMs?: number;
  }
}

/**
 * File-local types.
 */
namespace Private {
  /**
   * A span waiting to be sent, and who waits for its figures.
   */
  export interface IQueued {
    span: { start: number; end: number };
    resolve: (figures: ISpanFigures | null) => void;
  }
}
