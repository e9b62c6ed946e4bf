import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs } from '../tokens';

/**
 * What the panel's links and buttons do. The panel plugin runs them as
 * commands, so that every one of them also exists outside the panel.
 */
export interface IPanelActions {
  /**
   * Open a notebook or console by its server path.
   */
  openPath(path: string): void;
  /**
   * Interrupt one of this server's kernels, after a confirmation.
   *
   * @param label - what the kernel serves, for the confirmation
   */
  interruptKernel(kernelId: string, label: string): void;
  /**
   * Shut down one of this server's kernels, after a confirmation.
   *
   * @param label - what the kernel serves, for the confirmation
   */
  shutDownKernel(kernelId: string, label: string): void;
  /**
   * Release the GPU memory torch caches in one of this server's idle kernels,
   * and say how much the GPUs got back.
   *
   * @param label - what the kernel serves, for the notification
   */
  releaseCachedMemory(kernelId: string, label: string): void;
  /**
   * Point the current notebook's kernel at these GPUs, by their indices.
   */
  useGpus(gpuIndices: readonly number[]): void;
  /**
   * Whether there is a notebook to point at GPUs.
   */
  canUseGpus(): boolean;
  /**
   * Open the GPU dashboard in the main area, at one of its charts if given.
   */
  openDashboard(chart?: string): void;
  /**
   * Open the GPU Lab in the main area.
   */
  openLab(): void;
}

/**
 * The panel's actions as the commands of the other plugins, each run only
 * where its plugin added it (a JupyterLab without the document manager opens
 * no notebook, and says nothing).
 */
export function commandActions(commands: CommandRegistry): IPanelActions {
  const run = (command: string, args: ReadonlyPartialJSONObject): void => {
    if (commands.hasCommand(command)) {
      void commands.execute(command, args);
    }
  };
  return {
    openPath: path => run('docmanager:open', { path }),
    interruptKernel: (kernelId, label) =>
      run(CommandIDs.interruptKernel, { kernelId, label }),
    shutDownKernel: (kernelId, label) =>
      run(CommandIDs.shutDownKernel, { kernelId, label }),
    releaseCachedMemory: (kernelId, label) =>
      run(CommandIDs.releaseCachedMemory, { kernelId, label }),
    useGpus: gpus => run(CommandIDs.useGpu, { gpus: [...gpus] }),
    canUseGpus: () =>
      commands.hasCommand(CommandIDs.useGpu) &&
      commands.isEnabled(CommandIDs.useGpu),
    openDashboard: chart =>
      run(CommandIDs.openDashboard, chart ? { chart } : {}),
    openLab: () => run(CommandIDs.openLab, {})
  };
}
