import { acceptDialog, dismissDialog } from '@jupyterlab/testing';
import { KernelManager } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';

import { addKernelCommands } from '../kernels/kernelCommands';
import { CommandIDs } from '../tokens';
import { fakeServer, jsonResponse, requestedUrl } from './server';
import { trans } from './trans';
const KERNEL = 'ef726653-e9c2-4a5e-a6b4-d6c6409e3874';

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) {
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

describe('addKernelCommands', () => {
  let commands: CommandRegistry;
  let kernels: KernelManager;
  let server: ReturnType<typeof fakeServer>;
  let refreshed: jest.Mock;
  let answer: (request: Request) => unknown;

  beforeEach(async () => {
    // What jupyter_server answers: the kernels listed, 204 to an action.
    answer = request =>
      request.method === 'GET' ? [] : new Response(null, { status: 204 });
    server = fakeServer(request => answer(request));
    commands = new CommandRegistry();
    kernels = new KernelManager({ serverSettings: server.settings });
    await kernels.ready;
    refreshed = jest.fn(async () => {});
    addKernelCommands({
      commands,
      serverSettings: server.settings,
      kernels,
      refresh: refreshed,
      trans
    });
  });

  afterEach(() => {
    kernels.dispose();
  });

  /**
   * The requests that acted on the kernel: "DELETE kernels/<id>" and the like.
   */
  function actions(): string[] {
    return server.requests
      .filter(request => request.method !== 'GET')
      .map(
        request =>
          `${request.method} ${requestedUrl(request).pathname.replace('/user/alice/api/', '')}`
      );
  }

  it('shuts a kernel down only once the user confirms, then reads the GPUs again', async () => {
    const args = { kernelId: KERNEL, label: 'train.ipynb' };
    expect(commands.label(CommandIDs.shutDownKernel, args)).toBe(
      'Shut Down the Kernel of train.ipynb'
    );

    const declined = commands.execute(CommandIDs.shutDownKernel, args);
    await dismissDialog();
    await declined;
    expect(actions()).toEqual([]);

    const confirmed = commands.execute(CommandIDs.shutDownKernel, args);
    await acceptDialog();
    await confirmed;
    expect(actions()).toEqual([`DELETE kernels/${KERNEL}`]);
    expect(refreshed).toHaveBeenCalledTimes(1);
  });

  it('says so when the server would not interrupt the kernel', async () => {
    // JupyterLab logs each error it shows.
    const logged = [
      jest.spyOn(console, 'warn').mockImplementation(() => {}),
      jest.spyOn(console, 'error').mockImplementation(() => {})
    ];
    answer = request =>
      request.method === 'POST'
        ? jsonResponse({ message: 'Kernel does not exist' }, 404)
        : [];
    const interrupted = commands.execute(CommandIDs.interruptKernel, {
      kernelId: KERNEL,
      label: 'train.ipynb'
    });
    await acceptDialog();
    // The error, read and closed.
    await until(() =>
      document.body.textContent!.includes(
        'The kernel of train.ipynb was not interrupted'
      )
    );
    await acceptDialog();

    await interrupted;
    expect(actions()).toEqual([`POST kernels/${KERNEL}/interrupt`]);
    logged.forEach(spy => spy.mockRestore());
  });

  it('greys out every kernel command that names no kernel', () => {
    for (const id of [
      CommandIDs.interruptKernel,
      CommandIDs.shutDownKernel,
      CommandIDs.releaseCachedMemory
    ]) {
      expect(commands.isEnabled(id, {})).toBe(false);
      expect(commands.isEnabled(id, { kernelId: KERNEL })).toBe(true);
    }
  });
});
