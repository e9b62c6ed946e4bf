import { InspectionPhase } from '../tokens';

/**
 * What happens to an inspection of a kernel:
 *
 * - `start`: inspect the kernel (it changed, or someone asked again): ask
 *   the server what it sees
 * - `no-kernel`: there is no notebook or console, or it has no kernel
 * - `server-answered`: the server said what it sees; `python` whether the
 *   kernel can run the probe, `idle` whether it can run it now
 * - `server-failed`: the server could not inspect the kernel
 * - `kernel-idle`: the kernel became idle
 * - `restarting`: the kernel restarts: it is a new one once idle
 * - `probe-answered`, `probe-timed-out`, `probe-failed`: how the probe ended
 */
export type InspectionEvent =
  | { type: 'start' }
  | { type: 'no-kernel' }
  | { type: 'server-answered'; python: boolean; idle: boolean }
  | { type: 'server-failed' }
  | { type: 'kernel-idle' }
  | { type: 'restarting' }
  | { type: 'probe-answered' }
  | { type: 'probe-timed-out' }
  | { type: 'probe-failed' };

/**
 * Where an inspection stands.
 */
export interface IInspectionState {
  /**
   * The phase it is in.
   */
  readonly phase: InspectionPhase;
}

/**
 * The state before anything is inspected.
 */
export const INITIAL_STATE: IInspectionState = {
  phase: 'no-kernel'
};

/**
 * The state an event leads to; the same state when the event means nothing
 * in it (a late answer, an idle kernel with no probe waiting).
 *
 * A `start`, `no-kernel` or `restarting` begins a new inspection: the
 * inspector then aborts what the earlier one still awaits.
 */
export function nextState(
  state: IInspectionState,
  event: InspectionEvent
): IInspectionState {
  const move = (phase: InspectionPhase): IInspectionState => ({ phase });
  switch (event.type) {
    case 'start':
      return move('server');
    case 'no-kernel':
      return move('no-kernel');
    case 'restarting':
      return move('waiting');
    case 'server-answered':
      if (state.phase !== 'server') {
        return state;
      }
      if (!event.python) {
        return move('no-probe');
      }
      return move(event.idle ? 'probing' : 'waiting');
    case 'server-failed':
      return state.phase === 'server' ? move('failed') : state;
    case 'kernel-idle':
      return state.phase === 'waiting' ? move('probing') : state;
    case 'probe-answered':
      return state.phase === 'probing' ? move('probed') : state;
    case 'probe-timed-out':
      return state.phase === 'probing' ? move('timeout') : state;
    case 'probe-failed':
      return state.phase === 'probing' ? move('failed') : state;
  }
}
