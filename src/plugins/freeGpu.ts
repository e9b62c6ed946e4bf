import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

// The command's label is made synchronously, so it cannot wait for an import.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { formatList } from '../gpu/units';
import type { IRoomNeeded } from '../gpu/freeGpu';
import { WARNING_AUTO_CLOSE_MS } from '../notification';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';
import {
  CommandIDs,
  ICellGpuRuns,
  IGpuMonitorModel,
  INotebookGpuNeed,
  PANEL_PLUGIN_ID,
  TRANSLATION_DOMAIN
} from '../tokens';
import { followSettings } from './settings';

/**
 * Adds the command that points a notebook's kernel at the least used GPU,
 * or at given GPUs: a first cell that sets `CUDA_VISIBLE_DEVICES`.
 */
export const freeGpuPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:free-gpu',
  description:
    "Adds a command that inserts a first cell setting CUDA_VISIBLE_DEVICES, so that the notebook's kernel uses the least used GPU (or given GPUs).",
  autoStart: true,
  requires: [IGpuMonitorModel, INotebookTracker],
  optional: [ICommandPalette, ISettingRegistry, ICellGpuRuns, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: IGpuMonitorModel,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null,
    cellRuns: ICellGpuRuns | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    // The panel's rule for the room a proposed GPU must have free.
    let minFreePercent: number = SETTINGS_DEFAULTS.panel.freeGpuMinFreePercent;
    void followSettings(registry, PANEL_PLUGIN_ID, settings => {
      minFreePercent = settings.get('freeGpuMinFreePercent')
        .composite as number;
    });
    // What a notebook's cells recorded they need, when it is the current one.
    const needOf = (panel: NotebookPanel): INotebookGpuNeed | null => {
      const current = cellRuns?.current;
      return current?.path === panel.context.path ? current.need : null;
    };
    // The notebook a call is for: the one at `path`, or the current one.
    const notebookFor = (
      args: ReadonlyPartialJSONObject
    ): NotebookPanel | null =>
      typeof args.path === 'string'
        ? (tracker.find(panel => panel.context.path === args.path) ?? null)
        : tracker.currentWidget;

    app.commands.addCommand(CommandIDs.useGpu, {
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
              description: trans.__(
                'The notebook; the current one when left out'
              )
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
        const { cudaVisibleDevicesSource, isCudaVisibleDevicesCell } =
          await import('../gpu/freeGpu');
        const { kernelHoldings } = await import('../gpu/processes');
        let gpus = args.gpus as number[] | undefined;
        if (gpus === undefined) {
          const room = {
            need: needOf(panel),
            minFreeShare: minFreePercent / 100
          };
          const kernelId = panel.sessionContext.session?.kernel?.id ?? null;
          const choice = await Private.leastUsedIndex(
            model,
            kernelId,
            room,
            trans
          );
          if (typeof choice === 'string') {
            Notification.warning(choice, { autoClose: WARNING_AUTO_CLOSE_MS });
            return;
          }
          gpus = choice;
        }
        await panel.context.ready;
        Private.insertFirstCell(
          panel,
          cudaVisibleDevicesSource(gpus, trans),
          source => isCudaVisibleDevicesCell(source, trans)
        );
        app.shell.activateById(panel.id);
        const kernelId = panel.sessionContext.session?.kernel?.id;
        if (
          kernelId &&
          model.snapshot &&
          kernelHoldings(model.snapshot.gpus, kernelId).size > 0
        ) {
          const { warnRestartNeeded } = await import('../gpu/restartNotice');
          warnRestartNeeded(panel.sessionContext, trans);
        }
      }
    });
    palette?.addItem({
      command: CommandIDs.useGpu,
      category: trans.__('GPU Monitor')
    });
  }
};

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The least used GPU with the room needed (what the notebook's kernel
   * holds counting as room), as a list of one index; else why there is none.
   */
  export async function leastUsedIndex(
    model: IGpuMonitorModel,
    kernelId: string | null,
    room: IRoomNeeded,
    trans: TranslationBundle
  ): Promise<number[] | string> {
    if (model.snapshot === null) {
      await model.read();
    }
    const { gpuLoads, leastUsed, noRoomText } = await import('../gpu/freeGpu');
    const snapshot = model.snapshot;
    const loads = snapshot ? gpuLoads(snapshot, model.history, kernelId) : [];
    if (loads.length === 0) {
      return trans.__('No GPU to choose from: the server reads none.');
    }
    const least = leastUsed(loads, room);
    return least ? [least.index] : noRoomText(loads, room, trans);
  }

  /**
   * Put the source in a new first cell, or in the first cell when an
   * earlier use of the command wrote it; select it.
   *
   * @param ours - whether a cell's source is one the command wrote
   */
  export function insertFirstCell(
    panel: NotebookPanel,
    source: string,
    ours: (source: string) => boolean
  ): void {
    const notebook = panel.content;
    const shared = notebook.model!.sharedModel;
    const first = shared.cells[0];
    if (first?.cell_type === 'code' && ours(first.getSource())) {
      first.setSource(source);
    } else {
      shared.insertCell(0, { cell_type: 'code', source });
    }
    notebook.activeCellIndex = 0;
    void notebook.scrollToCell(notebook.widgets[0]);
  }
}
