import {
  Dialog,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { Kernel, KernelAPI, ServerConnection } from '@jupyterlab/services';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs } from '../tokens';

/**
 * Adds the commands that interrupt and shut down one of this server's
 * kernels, each after a confirmation, through jupyter_server's own kernel
 * API, and the one that releases the GPU memory torch caches in an idle
 * kernel (no confirmation: it loses nothing but the time the next allocation
 * takes). Each takes the kernel's id and what it serves as arguments; after
 * a shutdown or a release the GPUs are read again (`refresh`), so that the
 * memory freed shows at once.
 */
export function addKernelCommands(options: IKernelCommandsOptions): void {
  const { commands, serverSettings, kernels, refresh, trans } = options;
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

  commands.addCommand(
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
      failure: label => trans.__('The kernel of %1 was not interrupted', label),
      run: kernelId => KernelAPI.interruptKernel(kernelId, serverSettings)
    })
  );

  commands.addCommand(
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
        await kernels.shutdown(kernelId);
        // Show the memory freed without waiting for the next poll.
        await refresh();
      }
    })
  );

  // No confirmation: emptying torch's cache loses nothing but the time its
  // next allocation takes.
  commands.addCommand(CommandIDs.releaseCachedMemory, {
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
      const { releaseWithNotice } = await import('./cacheRelease');
      const notice = await releaseWithNotice(
        serverSettings,
        args.kernelId as string,
        (args.label as string | undefined) ?? trans.__('this kernel'),
        trans
      );
      Notification.emit(notice.message, notice.kind, { autoClose: 5000 });
      // Show the memory given back without waiting for the next poll.
      await refresh();
    }
  });
}

/**
 * Where the kernel commands act.
 */
export interface IKernelCommandsOptions {
  commands: CommandRegistry;
  serverSettings: ServerConnection.ISettings;
  kernels: Kernel.IManager;
  refresh: () => Promise<void>;
  trans: TranslationBundle;
}

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
