import { ISessionContext, Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import { WARNING_AUTO_CLOSE_MS } from '../notification';

/**
 * Tell that a kernel already using the GPU must restart before the cell
 * that points it at other GPUs takes effect, with the button that does it.
 */
export function warnRestartNeeded(
  session: ISessionContext,
  trans: TranslationBundle
): void {
  Notification.warning(
    trans.__(
      'This kernel already uses the GPU: restart it, then run the new first cell.'
    ),
    {
      autoClose: WARNING_AUTO_CLOSE_MS,
      actions: [
        {
          label: trans.__('Restart Kernel'),
          caption: trans.__(
            'Restart the kernel, so that it sees only the chosen GPUs'
          ),
          callback: () => {
            void session.restartKernel();
          }
        }
      ]
    }
  );
}
