import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { KernelAPI } from '@jupyterlab/services';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs, IGpuMonitorModel, TRANSLATION_DOMAIN } from '../tokens';

/**
 * Adds the commands that interrupt and shut down one of this server's
 * kernels, each after a confirmation, through jupyter_server's own kernel
 * API, and the one that releases the GPU memory torch caches in an idle
 * kernel: the GPU Monitor's process and kernel lists run them.
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
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const describedBy = {
      args: {
        type: 'object',
        properties: {
          kernelId: {
            type: 'string',
            description: trans.__('The id of the kernel')
          },
          label: {
            type: 'string',
            description: trans.__('What the kernel serves: its notebook')
          }
        },
        required: ['kernelId']
      }
    };
    /**
     * A command that does something to a kernel once the user confirmed.
     */
    const kernelCommand = (options: Private.IKernelAction) => ({
      label: (args: ReadonlyPartialJSONObject) =>
        typeof args.label === 'string'
          ? options.labelFor(args.label)
          : options.label,
      caption: options.caption,
      describedBy,
      isEnabled: (args: ReadonlyPartialJSONObject) =>
        typeof args.kernelId === 'string',
      execute: async (args: ReadonlyPartialJSONObject) => {
        const kernelId = args.kernelId as string;
        const label =
          (args.label as string | undefined) ?? trans.__('this kernel');
        const answer = await showDialog({
          title: options.question(label),
          body: options.consequence,
          buttons: [
            Dialog.cancelButton(),
            Dialog.warnButton({ label: options.button })
          ]
        });
        if (!answer.button.accept) {
          return;
        }
        try {
          await options.run(kernelId);
        } catch (error) {
          await showErrorMessage(options.failure(label), error as Error);
        }
      }
    });

    app.commands.addCommand(
      CommandIDs.interruptKernel,
      kernelCommand({
        label: trans.__('Interrupt Kernel'),
        labelFor: label => trans.__('Interrupt the Kernel of %1', label),
        caption: trans.__(
          "Interrupt one of this server's kernels: the cell it runs stops with a KeyboardInterrupt"
        ),
        question: label => trans.__('Interrupt the kernel of %1?', label),
        consequence: trans.__(
          'The cell it runs stops with a KeyboardInterrupt; its variables, and the GPU memory it holds, are kept.'
        ),
        button: trans.__('Interrupt'),
        failure: label =>
          trans.__('The kernel of %1 was not interrupted', label),
        run: kernelId =>
          KernelAPI.interruptKernel(kernelId, app.serviceManager.serverSettings)
      })
    );

    app.commands.addCommand(
      CommandIDs.shutDownKernel,
      kernelCommand({
        label: trans.__('Shut Down Kernel'),
        labelFor: label => trans.__('Shut Down the Kernel of %1', label),
        caption: trans.__(
          "Shut down one of this server's kernels, which frees the GPU memory it holds"
        ),
        question: label => trans.__('Shut down the kernel of %1?', label),
        consequence: trans.__(
          'Its variables are lost and the GPU memory it holds is freed.'
        ),
        button: trans.__('Shut Down'),
        failure: label => trans.__('The kernel of %1 was not shut down', label),
        run: async kernelId => {
          await app.serviceManager.kernels.shutdown(kernelId);
          // Show the memory freed without waiting for the next poll.
          await model.refresh();
        }
      })
    );

    // No confirmation: emptying torch's cache loses nothing but the time its
    // next allocation takes.
    app.commands.addCommand(CommandIDs.releaseCachedMemory, {
      label: args =>
        typeof args.label === 'string'
          ? trans.__('Release the Cached GPU Memory of %1', args.label)
          : trans.__('Release Cached GPU Memory'),
      caption: trans.__(
        'Empty the CUDA cache of torch in an idle kernel, and say what the GPU got back'
      ),
      describedBy,
      isEnabled: args => typeof args.kernelId === 'string',
      execute: async args => {
        const { releaseWithNotice } = await import('../gpu/cacheRelease');
        const notice = await releaseWithNotice(
          app.serviceManager.serverSettings,
          args.kernelId as string,
          (args.label as string | undefined) ?? trans.__('this kernel'),
          trans
        );
        Notification.emit(notice.message, notice.kind, { autoClose: 5000 });
        // Show the memory given back without waiting for the next poll.
        await model.refresh();
      }
    });
  }
};

/**
 * File-local types.
 */
namespace Private {
  /**
   * What a kernel command says and does.
   */
  export interface IKernelAction {
    /**
     * Its label without a kernel named.
     */
    label: string;
    /**
     * Its label for the kernel of a notebook.
     */
    labelFor: (label: string) => string;
    /**
     * What it does.
     */
    caption: string;
    /**
     * The confirmation's title.
     */
    question: (label: string) => string;
    /**
     * What happens to the kernel, in the confirmation.
     */
    consequence: string;
    /**
     * The confirming button.
     */
    button: string;
    /**
     * The title of the error shown when it fails.
     */
    failure: (label: string) => string;
    /**
     * Do it.
     */
    run: (kernelId: string) => Promise<void>;
  }
}
