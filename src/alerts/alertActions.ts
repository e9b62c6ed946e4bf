import { Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from '../tokens';
import { IGpuAlert } from './alerts';
import { kernelLabel } from '../gpu/processes';

/**
 * What frees an idle GPU that one of the user's own kernels holds, as the
 * buttons of its alert: its notebook, the memory torch caches there, the
 * kernel itself (after a confirmation). None unless that one kernel holds
 * every GPU the alert names.
 */
export function holderActions(
  shown: readonly IGpuAlert[],
  commands: CommandRegistry,
  trans: TranslationBundle
): Notification.IAction[] {
  const holder = shown[0]?.holder;
  if (
    !holder?.own ||
    holder.kernelId === null ||
    shown.some(alert => alert.holder?.kernelId !== holder.kernelId)
  ) {
    return [];
  }
  const kernel = {
    kernelId: holder.kernelId,
    label: kernelLabel(holder.kernelId, holder.path, trans)
  };
  const open: Notification.IAction[] =
    holder.path === null
      ? []
      : [
          {
            label: trans.__('Open %1', kernel.label),
            caption: trans.__('Open the notebook that holds the GPU'),
            callback: () => {
              void commands.execute('docmanager:open', { path: holder.path });
            }
          }
        ];
  return [
    ...open,
    {
      label: trans.__('Release Cached Memory'),
      caption: trans.__(
        'Give back the GPU memory torch caches in the idle kernel'
      ),
      callback: () => {
        void commands.execute(CommandIDs.releaseCachedMemory, kernel);
      }
    },
    {
      label: trans.__('Shut Down'),
      caption: trans.__('Shut the kernel down, after a confirmation'),
      displayType: 'warn',
      callback: () => {
        void commands.execute(CommandIDs.shutDownKernel, kernel);
      }
    }
  ];
}
