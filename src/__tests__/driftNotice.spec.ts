import { Notification } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';

import { DriftNotice } from '../env/driftNotice';
import {
  CommandIDs,
  IDriftFinding,
  IEnvironmentInspector,
  InspectorFinding
} from '../tokens';
import { trans } from './trans';

/**
 * The inspector as the notice sees it: the notebook it follows and the drift
 * it finds at a kernel start.
 */
class InspectorOf {
  driftFound = new Signal<IEnvironmentInspector, readonly InspectorFinding[]>(
    this as unknown as IEnvironmentInspector
  );
  target: { label: string } | null = { label: 'train.ipynb' };

  find(...titles: string[]): void {
    const drift: IDriftFinding[] = titles.map(title => ({
      id: 'drift-package-numpy',
      severity: 'warning',
      title,
      evidence: 'numpy in the kernel and in the fingerprint',
      fix: 'pip install numpy==2.3.5',
      restart: false
    }));
    this.driftFound.emit(drift);
  }
}

describe('DriftNotice', () => {
  let commands: CommandRegistry;
  let inspector: InspectorOf;
  let notice: DriftNotice;
  const recorded = jest.fn();

  beforeEach(() => {
    commands = new CommandRegistry();
    commands.addCommand(CommandIDs.recordEnvironment, { execute: recorded });
    inspector = new InspectorOf();
    notice = new DriftNotice(
      inspector as unknown as IEnvironmentInspector,
      commands,
      trans
    );
  });

  afterEach(() => {
    notice.dispose();
    Notification.dismiss();
    recorded.mockClear();
  });

  it('names the notebook and the first change, and counts the others', () => {
    inspector.find('numpy 2.3.5 → 2.4.6 since the fingerprint');
    inspector.target = { label: 'eval.ipynb' };
    inspector.find(
      'torch 2.4.1 → 2.5.0 since the fingerprint',
      'numpy 2.3.5 → 2.4.6 since the fingerprint',
      'CUDA driver 550.54 → 570.86 since the fingerprint'
    );

    expect(
      Notification.manager.notifications.map(({ message }) => message)
    ).toEqual([
      'eval.ipynb: torch 2.4.1 → 2.5.0 since the fingerprint, and 2 more differences',
      'train.ipynb: numpy 2.3.5 → 2.4.6 since the fingerprint'
    ]);
  });

  it("keeps one warning per notebook, whose button records the kernel's environment", () => {
    inspector.find('numpy 2.3.5 → 2.4.6 since the fingerprint');
    inspector.find('numpy 2.3.5 → 2.5.0 since the fingerprint');

    const [warning] = Notification.manager.notifications;
    expect(Notification.manager.count).toBe(1);
    expect(warning.message).toMatch(/2\.5\.0/);
    // No Environment panel here: no "Show".
    const buttons = warning.options.actions ?? [];
    expect(buttons.map(action => action.label)).toEqual(['Update Fingerprint']);
    buttons[0].callback(new MouseEvent('click'));
    expect(recorded).toHaveBeenCalledTimes(1);
  });

  it('offers to show the Environment panel where there is one', () => {
    commands.addCommand(CommandIDs.openEnvironmentPanel, { execute: () => {} });
    inspector.find('numpy 2.3.5 → 2.4.6 since the fingerprint');

    const [warning] = Notification.manager.notifications;
    expect((warning.options.actions ?? []).map(action => action.label)).toEqual(
      ['Show', 'Update Fingerprint']
    );
  });
});
