import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The commands are there from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addKernelCommands } from '../kernels/kernelCommands';
import { IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';

/**
 * Adds the commands that interrupt, shut down or free the cached GPU memory
 * of one of this server's kernels (see {@link addKernelCommands}): the GPU
 * Monitor's process and kernel lists run them.
 */
export const kernelActionsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:kernel-actions',
  description:
    "Adds commands that interrupt, shut down or free the cached GPU memory of one of this server's kernels, for the GPU Monitor's lists of processes and kernels.",
  autoStart: true,
  requires: [IGpuMonitorModel],
  optional: [ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    translator: ITranslator | null
  ): void => {
    addKernelCommands({
      commands: app.commands,
      serverSettings: app.serviceManager.serverSettings,
      kernels: app.serviceManager.kernels,
      refresh: () => model.refresh(),
      trans: (translator ?? nullTranslator).load(TRANSLATION_DOMAIN)
    });
  }
};
