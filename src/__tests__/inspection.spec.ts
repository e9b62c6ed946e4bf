/**
 * @jest-environment node
 */
import {
  IInspectionState,
  INITIAL_STATE,
  InspectionEvent,
  nextState
} from '../env/inspection';
import { InspectionPhase } from '../tokens';

/**
 * A state in a phase.
 */
function inPhase(phase: InspectionPhase): IInspectionState {
  return { phase };
}

const ALL_PHASES: InspectionPhase[] = [
  'no-kernel',
  'server',
  'waiting',
  'probing',
  'probed',
  'no-probe',
  'timeout',
  'failed'
];

describe('an inspection', () => {
  it('starts with no kernel', () => {
    expect(INITIAL_STATE).toEqual({ phase: 'no-kernel' });
  });

  it.each(ALL_PHASES)(
    'from %s, begins anew on a start, a kernel gone or a restart',
    phase => {
      expect(nextState(inPhase(phase), { type: 'start' })).toEqual({
        phase: 'server'
      });
      expect(nextState(inPhase(phase), { type: 'no-kernel' })).toEqual({
        phase: 'no-kernel'
      });
      expect(nextState(inPhase(phase), { type: 'restarting' })).toEqual({
        phase: 'waiting'
      });
    }
  );

  it('probes at once a Python kernel the server answered for while it is idle', () => {
    expect(
      nextState(inPhase('server'), {
        type: 'server-answered',
        python: true,
        idle: true
      })
    ).toEqual({ phase: 'probing' });
  });

  it('waits for a busy Python kernel, then probes it once idle', () => {
    const waiting = nextState(inPhase('server'), {
      type: 'server-answered',
      python: true,
      idle: false
    });
    expect(waiting).toEqual({ phase: 'waiting' });
    expect(nextState(waiting, { type: 'kernel-idle' })).toEqual({
      phase: 'probing'
    });
  });

  it('does not probe a kernel of another language', () => {
    for (const idle of [true, false]) {
      expect(
        nextState(inPhase('server'), {
          type: 'server-answered',
          python: false,
          idle
        }).phase
      ).toBe('no-probe');
    }
  });

  it('fails when the server cannot inspect the kernel', () => {
    expect(nextState(inPhase('server'), { type: 'server-failed' })).toEqual({
      phase: 'failed'
    });
  });

  it.each([
    ['probe-answered', 'probed'],
    ['probe-timed-out', 'timeout'],
    ['probe-failed', 'failed']
  ] as [InspectionEvent['type'], InspectionPhase][])(
    'ends a probe that %s in %s',
    (type, phase) => {
      expect(
        nextState(inPhase('probing'), { type } as InspectionEvent)
      ).toEqual({ phase });
    }
  );

  it.each(ALL_PHASES.filter(phase => phase !== 'server'))(
    'ignores a late answer of the server in %s',
    phase => {
      const state = inPhase(phase);
      expect(
        nextState(state, {
          type: 'server-answered',
          python: true,
          idle: true
        })
      ).toBe(state);
      expect(nextState(state, { type: 'server-failed' })).toBe(state);
    }
  );

  it.each(ALL_PHASES.filter(phase => phase !== 'probing'))(
    "ignores a probe's end in %s",
    phase => {
      const state = inPhase(phase);
      for (const type of [
        'probe-answered',
        'probe-timed-out',
        'probe-failed'
      ] as const) {
        expect(nextState(state, { type })).toBe(state);
      }
    }
  );

  it.each(ALL_PHASES.filter(phase => phase !== 'waiting'))(
    'ignores an idle kernel in %s, with no probe waiting',
    phase => {
      const state = inPhase(phase);
      expect(nextState(state, { type: 'kernel-idle' })).toBe(state);
    }
  );
});
