import type { KernelMessage } from '@jupyterlab/services';

import { ICellRun } from '../tokens';

/**
 * A cell run as the kernel's own messages time it: from its
 * `execute_input` (when it really started, however long it was queued) to
 * the `status: idle` whose parent is the same request (an interrupted or
 * failed run ends there too).
 */
export type ICellRunTiming = Omit<ICellRun, 'figures'>;

/**
 * Times the cell runs of one kernel connection from the messages it sends
 * and receives: each message costs a map lookup, however many cells are
 * queued or how long the notebook is.
 *
 * Only requests that name their cell (`metadata.cellId`, which JupyterLab
 * sends with every cell it runs) are timed; a queued request the kernel
 * aborts (after an error in an earlier cell) never started, and is dropped
 * without a run.
 */
export class CellRunTimer {
  /**
   * How many requests are queued or running.
   */
  get pending(): number {
    return this._pending.size;
  }

  /**
   * Whether a cell is running now.
   */
  get running(): boolean {
    return this._running > 0;
  }

  /**
   * Take note of a message sent to the kernel: an `execute_request` of a
   * cell is queued.
   */
  sent(msg: KernelMessage.IMessage): void {
    if (msg.header.msg_type !== 'execute_request') {
      return;
    }
    const cellId = msg.metadata?.cellId;
    if (typeof cellId === 'string') {
      this._pending.set(msg.header.msg_id, {
        cellId,
        start: null,
        executionCount: null,
        firstLine: ''
      });
    }
  }

  /**
   * Take note of a message received from the kernel.
   *
   * @returns the run it starts or ends; null when it does neither
   */
  received(msg: KernelMessage.IMessage): CellRunTimer.IEvent | null {
    const type = msg.header.msg_type;
    if (type !== 'execute_input' && type !== 'status') {
      return null;
    }
    if (type === 'status') {
      const state = (msg as KernelMessage.IStatusMsg).content.execution_state;
      if (state === 'starting' || state === 'restarting' || state === 'dead') {
        // A new kernel process: what the old one had queued will never end.
        this.reset();
        return null;
      }
      if (state !== 'idle') {
        return null;
      }
    }
    const requestId = (msg.parent_header as Partial<KernelMessage.IHeader>)
      .msg_id;
    const request =
      requestId === undefined ? undefined : this._pending.get(requestId);
    if (request === undefined) {
      return null;
    }
    const time = Private.messageTime(msg);
    if (type === 'execute_input') {
      const content = (msg as KernelMessage.IExecuteInputMsg).content;
      request.start = time;
      request.executionCount = content.execution_count ?? null;
      request.firstLine = Private.firstLine(content.code);
      this._running++;
      return { kind: 'started', cellId: request.cellId, start: time };
    }
    this._pending.delete(requestId!);
    if (request.start === null) {
      return null;
    }
    this._running--;
    return {
      kind: 'finished',
      run: {
        cellId: request.cellId,
        executionCount: request.executionCount,
        firstLine: request.firstLine,
        start: request.start,
        end: Math.max(time, request.start)
      }
    };
  }

  /**
   * Forget every queued and running request, as when the kernel restarts.
   */
  reset(): void {
    this._pending.clear();
    this._running = 0;
  }

  private _pending = new Map<string, Private.IRequest>();
  private _running = 0;
}

/**
 * The types of {@link CellRunTimer}.
 */
export namespace CellRunTimer {
  /**
   * A run started (`execute_input`) or ended (`status: idle`).
   */
  export type IEvent =
    | { kind: 'started'; cellId: string; start: number }
    | { kind: 'finished'; run: ICellRunTiming };
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * A request of a cell, queued (no start yet) or running.
   */
  export interface IRequest {
    cellId: string;
    start: number | null;
    executionCount: number | null;
    firstLine: string;
  }

  /**
   * When the kernel sent a message, in seconds since the epoch: its header's
   * date (the kernel's clock, the one the server's readings use too), or
   * now when a kernel older than protocol 5.1 sent none.
   */
  export function messageTime(msg: KernelMessage.IMessage): number {
    const parsed = msg.header.date ? Date.parse(msg.header.date) : NaN;
    return (Number.isNaN(parsed) ? Date.now() : parsed) / 1000;
  }

  /**
   * The first line of some code that is not blank, trimmed.
   */
  export function firstLine(code: string): string {
    return (
      code
        .split('\n')
        .map(line => line.trim())
        .find(line => line.length > 0) ?? ''
    );
  }
}
