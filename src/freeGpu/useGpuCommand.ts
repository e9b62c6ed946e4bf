import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs, IGpuMonitorModel, INotebookGpuNeed } from '../tokens';
import type { IRoomNeeded } from './freeGpu';
import { formatList } from '../format/units';

/**
 * Adds the command that points a notebook's kernel at the least used GPU
 * with the room it needs, or at given GPUs (see {@link useGpuIn}, loaded at
 * its first use): for the notebook at `path`, or the current one.
 */
export function addUseGpuCommand(options: IUseGpuCommandOptions): void {
  const { commands, notebooks, model, trans } = options;
  const notebookFor = (
    args: ReadonlyPartialJSONObject
  ): NotebookPanel | null =>
    typeof args.path === 'string'
      ? (notebooks.find(panel => panel.context.path === args.path) ?? null)
      : notebooks.currentWidget;

  commands.addCommand(CommandIDs.useGpu, {
    label: args => {
      const gpus = args.gpus as number[] | undefined;
      return gpus
        ? trans._n(
            'Use GPU %2 in This Notebook',
            'Use GPUs %2 in This Notebook',
            gpus.length,
            formatList(gpus.map(String), trans)
          )
        : trans.__('Use the Least Used GPU in This Notebook');
    },
    caption: trans.__(
      "Insert a first cell that sets CUDA_VISIBLE_DEVICES, so that the notebook's kernel uses only the least used GPU (or the GPUs given); it must run before torch initialises CUDA"
    ),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          gpus: {
            type: 'array',
            items: { type: 'integer', minimum: 0 },
            description: trans.__(
              'The GPUs to use, by nvidia-smi index; the least used one when left out'
            )
          },
          path: {
            type: 'string',
            description: trans.__('The notebook; the current one when left out')
          }
        }
      }
    },
    isEnabled: args => notebookFor(args) !== null,
    execute: async args => {
      const panel = notebookFor(args);
      if (!panel) {
        return;
      }
      const { useGpuIn } = await import('./useGpu');
      await useGpuIn(
        panel,
        args.gpus as number[] | undefined,
        model,
        options.room(panel),
        trans
      );
      options.show(panel);
    }
  });
}

/**
 * What the use-GPU command acts on.
 */
export interface IUseGpuCommandOptions {
  commands: CommandRegistry;
  notebooks: INotebookTracker;
  model: IGpuMonitorModel;
  /**
   * The room a GPU proposed for the notebook must have.
   */
  room: (panel: NotebookPanel) => IRoomNeeded;
  /**
   * Bring the notebook into view.
   */
  show: (panel: NotebookPanel) => void;
  trans: TranslationBundle;
}

/**
 * The room a notebook needs: its cells' recorded need when it has one, else
 * a share of the card.
 */
export function roomFor(
  need: INotebookGpuNeed | null,
  minFreePercent: number
): IRoomNeeded {
  return { need, minFreeShare: minFreePercent / 100 };
}
