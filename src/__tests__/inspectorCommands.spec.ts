import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';

import { addInspectorCommands } from '../env/inspectorCommands';
import { CommandIDs, IEnvironmentInspector } from '../tokens';
import { trans } from './trans';

describe('addInspectorCommands', () => {
  it('refreshes and checks deeply only a kernel there is, and a deep check only one that can be probed', () => {
    const commands = new CommandRegistry();
    const inspector = {
      target: null as unknown,
      phase: 'idle',
      changed: new Signal<unknown, void>({})
    };
    addInspectorCommands(
      commands,
      inspector as unknown as IEnvironmentInspector,
      trans
    );
    const changed = jest.fn();
    commands.commandChanged.connect(changed);

    expect(commands.isEnabled(CommandIDs.refreshEnvironment)).toBe(false);
    expect(commands.isEnabled(CommandIDs.deepCheck)).toBe(false);

    inspector.target = { sessionContext: { session: { kernel: {} } } };
    inspector.changed.emit();
    expect(changed).toHaveBeenCalled();
    expect(commands.isEnabled(CommandIDs.refreshEnvironment)).toBe(true);
    expect(commands.isEnabled(CommandIDs.deepCheck)).toBe(true);

    // A kernel that is not Python: nothing to import torch in.
    inspector.phase = 'no-probe';
    expect(commands.isEnabled(CommandIDs.deepCheck)).toBe(false);
    expect(commands.label(CommandIDs.deepCheck, { isPalette: true })).toBe(
      'Deep Check of the Kernel Environment'
    );
  });
});
