/**
 * @jest-environment node
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { NotebookGpuRuns } from '../cells/notebookRuns';
import { NotebookRunRecorder } from '../cells/recorder';
import { CellRunTimer } from '../cells/runTimer';
import { SpanQueue } from '../cells/spanQueue';
import { ISpanFigures } from '../restapi/kernels';
import MESSAGES from './fixtures/ipykernel-queued-interrupted-aborted.json';
import { a5000KernelSpans, t4KernelSpans } from './payloads';

/**
 * What a real ipykernel (7.4) sent and got for six cells run as JupyterLab
 * runs them (`metadata.cellId`, `stop_on_error`): `cell-sleep-1`;
 * `cell-sleep-30`, queued behind it and interrupted after 1.6 s;
 * `cell-print`, queued behind that and aborted; then `cell-error` (1 / 0)
 * with `cell-aborted` and `cell-after` queued behind it, both aborted.
 */
const RECORDED = MESSAGES as unknown as Kernel.IAnyMessageArgs[];

/**
 * Epoch seconds of an ISO date.
 */
function seconds(date: string): number {
  return Date.parse(date) / 1000;
}

/**
 * Feed messages to a timer; the events they cause.
 */
function feed(
  timer: CellRunTimer,
  messages: Kernel.IAnyMessageArgs[]
): CellRunTimer.IEvent[] {
  const events: CellRunTimer.IEvent[] = [];
  for (const { direction, msg } of messages) {
    if (direction === 'send') {
      timer.sent(msg);
    } else {
      const event = timer.received(msg);
      if (event) {
        events.push(event);
      }
    }
  }
  return events;
}

describe('CellRunTimer', () => {
  it('times each cell from its execute_input to the idle answering it: queued, interrupted and failed cells alike', () => {
    const timer = new CellRunTimer();

    const finished = feed(timer, RECORDED).filter(
      event => event.kind === 'finished'
    );

    expect(
      finished.map(event => event.kind === 'finished' && event.run)
    ).toEqual([
      {
        cellId: 'cell-sleep-1',
        executionCount: 1,
        firstLine: 'import time',
        start: seconds('2026-11-30T05:13:49.414Z'),
        end: seconds('2026-11-30T05:13:50.927Z')
      },
      {
        // Queued at 49.41 behind the first; it started at 50.93.
        cellId: 'cell-sleep-30',
        executionCount: 2,
        firstLine: '# interrupted after ~2 s',
        start: seconds('2026-11-30T05:13:50.928Z'),
        end: seconds('2026-11-30T05:13:52.507Z')
      },
      {
        cellId: 'cell-error',
        executionCount: 3,
        firstLine: '1 / 0',
        start: seconds('2026-11-30T05:13:52.867Z'),
        end: seconds('2026-11-30T05:13:52.886Z')
      }
    ]);
    // The aborted requests never started: nothing is left waiting for them.
    expect(timer.pending).toBe(0);
    expect(timer.running).toBe(false);
  });

  it('says when a cell starts, and that one is running until its idle', () => {
    const timer = new CellRunTimer();
    const [request, , , busy, , input] = RECORDED;

    feed(timer, [request, busy]);
    expect(timer.running).toBe(false);
    expect(feed(timer, [input])).toEqual([
      {
        kind: 'started',
        cellId: 'cell-sleep-1',
        start: seconds('2026-11-30T05:13:49.414Z')
      }
    ]);
    expect(timer.running).toBe(true);
  });

  it('forgets what a kernel had queued when it restarts', () => {
    const timer = new CellRunTimer();
    const [request, , , , , input, idle] = RECORDED;
    feed(timer, [request, input]);
    const restarting = {
      ...idle.msg,
      parent_header: {},
      content: { execution_state: 'restarting' }
    } as unknown as KernelMessage.IMessage;

    timer.received(restarting);

    expect(timer.running).toBe(false);
    expect(timer.pending).toBe(0);
    expect(feed(timer, [idle])).toEqual([]);
  });

  it('times nothing another client asked for, or a request naming no cell', () => {
    const timer = new CellRunTimer();
    const [request, , , , , input, idle] = RECORDED;
    const anonymous = {
      ...request,
      msg: { ...request.msg, metadata: {} }
    } as Kernel.IAnyMessageArgs;

    expect(feed(timer, [input, idle])).toEqual([]);
    expect(feed(timer, [anonymous, input, idle])).toEqual([]);
  });
});

describe('NotebookRunRecorder', () => {
  /**
   * A notebook's session whose kernel sends and receives `messages`.
   */
  function session() {
    const owner = {};
    const anyMessage = new Signal<unknown, Kernel.IAnyMessageArgs>(owner);
    const connection = { anyMessage, kernel: { id: 'ef726653' } };
    const context = {
      session: connection,
      sessionChanged: new Signal(owner),
      kernelChanged: new Signal(owner)
    };
    return {
      context: context as unknown as ISessionContext,
      play: (messages: Kernel.IAnyMessageArgs[]) =>
        messages.forEach(message => anyMessage.emit(message)),
      kernelChanged: context.kernelChanged
    };
  }

  it("gives each run the kernel's figures over it, and says while a cell runs", async () => {
    const { context, play } = session();
    const runs = new NotebookGpuRuns({ path: 'train.ipynb' });
    const [measured, , , held] = a5000KernelSpans().spans;
    const answers: (ISpanFigures | null)[] = [measured, null, held];
    const measure = jest.fn(
      async (kernelId: string, span: { start: number; end: number }) =>
        answers.shift() ?? null
    );
    const running = jest.fn();
    const recorder = new NotebookRunRecorder({
      sessionContext: context,
      runs,
      measure,
      onRunningChanged: running
    });

    play(RECORDED);
    await new Promise(resolve => setTimeout(resolve, 0));

    expect(runs.kernelId).toBe('ef726653');
    expect(
      measure.mock.calls.map(([kernelId, span]) => [kernelId, span.start])
    ).toEqual([
      ['ef726653', seconds('2026-11-30T05:13:49.414Z')],
      ['ef726653', seconds('2026-11-30T05:13:50.928Z')],
      ['ef726653', seconds('2026-11-30T05:13:52.867Z')]
    ]);
    expect(runs.runs.map(run => [run.cellId, run.figures])).toEqual([
      ['cell-sleep-1', measured],
      // The server could not say: the run keeps no figures.
      ['cell-sleep-30', null],
      ['cell-error', held]
    ]);
    expect(runs.lastRun('cell-sleep-1')?.figures).toBe(measured);
    expect(running.mock.calls).toEqual([
      [true],
      [false],
      [true],
      [false],
      [true],
      [false]
    ]);
    recorder.dispose();
  });

  it('stops saying a cell runs when the kernel changes under it', () => {
    const { context, play, kernelChanged } = session();
    const running = jest.fn();
    const recorder = new NotebookRunRecorder({
      sessionContext: context,
      runs: new NotebookGpuRuns({ path: 'train.ipynb' }),
      measure: async () => null,
      onRunningChanged: running
    });
    const [request, , , , , input] = RECORDED;

    play([request, input]);
    kernelChanged.emit(undefined);

    expect(running.mock.calls).toEqual([[true], [false]]);
    recorder.dispose();
  });
});

describe('NotebookGpuRuns', () => {
  it('keeps the newest runs and the last run of each cell', () => {
    const runs = new NotebookGpuRuns({ path: 'train.ipynb', maxRuns: 2 });
    const timing = (cellId: string, start: number) => ({
      cellId,
      executionCount: start,
      firstLine: 'train()',
      start,
      end: start + 1
    });
    runs.add(timing('a', 1));
    const second = runs.add(timing('b', 2));
    runs.add(timing('a', 3));

    const [figures] = t4KernelSpans().spans;
    const measured = runs.setFigures(second, figures);

    expect(runs.runs.map(run => run.start)).toEqual([2, 3]);
    expect(runs.lastRun('a')?.start).toBe(3);
    expect(runs.lastRun('b')).toBe(measured);
    expect(runs.revision).toBe(4);
  });
});

describe('SpanQueue', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('asks once per kernel for the runs that end together, and answers each with its own figures', async () => {
    const answer = a5000KernelSpans();
    const send = jest.fn(async () => answer);
    const queue = new SpanQueue({ send, delayMs: 100 });

    const figures = Promise.all(
      answer.spans.map(span => queue.measure('ef726653', span))
    );
    jest.advanceTimersByTime(100);

    expect(await figures).toEqual(answer.spans);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send).toHaveBeenCalledWith(
      'ef726653',
      answer.spans.map(({ start, end }) => ({ start, end }))
    );
  });

  it('answers null when the server fails, or once it is disposed', async () => {
    const failing = new SpanQueue({
      send: async () => {
        throw new Error('404: no such kernel on this server');
      }
    });
    const failed = failing.measure('gone', { start: 1, end: 5 });
    jest.runAllTimers();
    const disposed = new SpanQueue({ send: jest.fn() });
    const dropped = disposed.measure('ef726653', { start: 1, end: 5 });

    disposed.dispose();

    expect(await failed).toBeNull();
    expect(await dropped).toBeNull();
  });
});
