import { CommandRegistry } from '@lumino/commands';

import { commandActions } from '../components/actions';
import { CommandIDs } from '../tokens';

describe('commandActions', () => {
  it("runs the other plugins' commands with what the panel names, and nothing where a command is missing", async () => {
    const commands = new CommandRegistry();
    const ran: [string, unknown][] = [];
    for (const id of ['docmanager:open', CommandIDs.shutDownKernel]) {
      commands.addCommand(id, { execute: args => void ran.push([id, args]) });
    }
    const actions = commandActions(commands);

    actions.openPath('lab/train.ipynb');
    actions.shutDownKernel('k-1', 'train.ipynb');
    actions.interruptKernel('k-1', 'train.ipynb'); // no such command here
    await Promise.resolve();

    expect(ran).toEqual([
      ['docmanager:open', { path: 'lab/train.ipynb' }],
      [CommandIDs.shutDownKernel, { kernelId: 'k-1', label: 'train.ipynb' }]
    ]);
  });

  it('offers to use GPUs only while the use-GPU command can run', () => {
    const commands = new CommandRegistry();
    const actions = commandActions(commands);
    expect(actions.canUseGpus()).toBe(false);

    let notebookOpen = false;
    commands.addCommand(CommandIDs.useGpu, {
      execute: () => {},
      isEnabled: () => notebookOpen
    });
    expect(actions.canUseGpus()).toBe(false);
    notebookOpen = true;
    expect(actions.canUseGpus()).toBe(true);
  });
});
