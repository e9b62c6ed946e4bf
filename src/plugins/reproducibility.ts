import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The commands are registered, and drift watched, from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { DriftNotice } from '../env/driftNotice';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addReproducibilityCommands } from '../env/reproducibilityCommands';
import type {
  IReproducibilityContext,
  IReproducibilitySettings
} from '../env/reproducibilityActions';
import {
  CommandIDs,
  IEnvironmentInspector,
  TRANSLATION_DOMAIN
} from '../tokens';
import { followSettings } from './settings';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * Adds the reproducibility tools: the seed cell, the environment
 * fingerprint in the notebook's metadata, the notification when a kernel
 * drifted from it, and environment.yml next to the notebook.
 */
export const reproducibilityPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-gpu-monitor:reproducibility',
  description:
    "Adds the reproducibility cell (seeds and deterministic switches for the kernel's frameworks), the environment fingerprint kept in the notebook with a drift check at each kernel start, and the export of environment.yml into the notebook's folder.",
  autoStart: true,
  requires: [INotebookTracker, IEnvironmentInspector],
  optional: [ICommandPalette, ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    inspector: IEnvironmentInspector,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const context: IReproducibilityContext = {
      app,
      inspector,
      trans,
      settings: { ...SETTINGS_DEFAULTS.reproducibility, alwaysInclude: [] }
    };
    void followSettings(registry, reproducibilityPlugin.id, loaded => {
      context.settings =
        loaded.composite as unknown as IReproducibilitySettings;
    });
    addReproducibilityCommands(app.commands, notebooks, inspector, context);
    new DriftNotice(inspector, app.commands, trans);

    const category = trans.__('GPU Monitor');
    for (const command of [
      CommandIDs.insertReproducibilityCell,
      CommandIDs.exportEnvironmentFile
    ]) {
      palette?.addItem({ command, category });
    }
    // JupyterLab's palette passes no arguments of its own: the label's
    // context comes from this one.
    palette?.addItem({
      command: CommandIDs.recordEnvironment,
      category,
      args: { isPalette: true }
    });
  }
};
