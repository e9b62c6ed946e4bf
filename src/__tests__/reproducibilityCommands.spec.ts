import { NotebookTracker } from '@jupyterlab/notebook';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';

import { addReproducibilityCommands } from '../env/reproducibilityCommands';
import { IReproducibilityContext } from '../env/reproducibilityActions';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';
import { CommandIDs, IEnvironmentInspector } from '../tokens';
import { trans } from './trans';

describe('addReproducibilityCommands', () => {
  it('offers the commands greyed out while no notebook is open, each saying what it does', () => {
    const commands = new CommandRegistry();
    const notebooks = new NotebookTracker({ namespace: 'reproducibility' });
    const inspector = {
      target: null,
      fingerprint: null,
      changed: new Signal<unknown, void>({})
    } as unknown as IEnvironmentInspector;
    const context = {
      inspector,
      trans,
      settings: { ...SETTINGS_DEFAULTS.reproducibility, alwaysInclude: [] }
    } as unknown as IReproducibilityContext;

    addReproducibilityCommands(commands, notebooks, inspector, context);

    for (const id of [
      CommandIDs.insertReproducibilityCell,
      CommandIDs.recordEnvironment,
      CommandIDs.exportEnvironmentFile
    ]) {
      expect(commands.isEnabled(id)).toBe(false);
    }
    // Among every extension's commands in the palette it says what it records.
    expect(commands.label(CommandIDs.recordEnvironment)).toBe(
      'Record Environment'
    );
    expect(
      commands.label(CommandIDs.recordEnvironment, { isPalette: true })
    ).toBe('Record the Kernel Environment in the Notebook');
    notebooks.dispose();
  });
});
