import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import * as React from 'react';

import { CommandIDs, TRANSLATION_DOMAIN } from '../tokens';
import { IServerStatus } from '../restapi/gpus';

/**
 * Adds the command that shows how the server extension reads the GPUs.
 */
export const serverStatusPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:server-status',
  description:
    'Adds a command that shows which source the server reads the GPUs from, how often, and why it cannot.',
  autoStart: true,
  optional: [ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);

    app.commands.addCommand(CommandIDs.showServerStatus, {
      label: trans.__('Show GPU Monitor Server Status'),
      caption: trans.__(
        'Show which source the server reads the GPUs from, how often, and why it cannot'
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: async () => {
        const title = trans.__('GPU Monitor Server Status');
        let status: IServerStatus;
        try {
          const { fetchStatus } = await import('../api');
          status = await fetchStatus(app.serviceManager.serverSettings);
        } catch (error) {
          // A 404 means the server extension is not loaded, which its own
          // message ("Not Found") does not tell.
          const { classifyFailure, describeFailure } =
            await import('../gpu/failure');
          const failure = classifyFailure(error);
          const { message, hint } = describeFailure(failure, trans);
          await showErrorMessage(
            title,
            failure.kind === 'not_enabled'
              ? (await import('../format/units')).formatSentences(
                  message,
                  hint,
                  trans
                )
              : (error as Error)
          );
          return;
        }
        // The dialog's content loads with its first opening.
        const { ServerStatus } = await import('../components/ServerStatus');
        await showDialog({
          title,
          body: React.createElement(ServerStatus, { status, trans }),
          buttons: [Dialog.okButton({ label: trans.__('Close') })]
        });
      }
    });

    palette?.addItem({
      command: CommandIDs.showServerStatus,
      category: trans.__('GPU Monitor')
    });
  }
};
