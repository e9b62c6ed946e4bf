import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The command is there from the start; what it does loads at its first use.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addUseGpuCommand, roomFor } from '../freeGpu/useGpuCommand';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';
import {
  CommandIDs,
  ICellGpuRuns,
  IGpuMonitorModel,
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
    addUseGpuCommand({
      commands: app.commands,
      notebooks: tracker,
      model,
      // What the notebook's cells recorded they need, when it is the current
      // one; else the panel's share of the card.
      room: panel => {
        const current = cellRuns?.current;
        const need = current?.path === panel.context.path ? current.need : null;
        return roomFor(need, minFreePercent);
      },
      show: panel => app.shell.activateById(panel.id),
      trans
    });
    palette?.addItem({
      command: CommandIDs.useGpu,
      category: trans.__('GPU Monitor')
    });
  }
};
