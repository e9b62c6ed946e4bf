import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { diceIcon } from '../icons';
import { notificationText, WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import type {
  IReproducibilityContext,
  IReproducibilitySettings
} from '../env/reproducibilityActions';
import {
  CommandIDs,
  IEnvironmentInspector,
  InspectorFinding,
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
    // What the commands do is loaded at the first of them.
    const actions = () => import('../env/reproducibilityActions');

    /**
     * The current notebook, when the inspector follows it.
     */
    const inspected = (): NotebookPanel | null => {
      const panel = notebooks.currentWidget;
      return panel && inspector.target?.sessionContext === panel.sessionContext
        ? panel
        : null;
    };
    /**
     * A command's state and action on the current notebook, when the
     * inspector follows it and it has a kernel.
     */
    const onInspectedKernel = (
      run: (panel: NotebookPanel) => Promise<void>
    ): Pick<CommandRegistry.ICommandOptions, 'isEnabled' | 'execute'> => {
      const withKernel = () => {
        const panel = inspected();
        return panel?.sessionContext.session?.kernel ? panel : null;
      };
      return {
        isEnabled: () => withKernel() !== null,
        execute: async () => {
          const panel = withKernel();
          if (panel) {
            await run(panel);
          }
        }
      };
    };

    app.commands.addCommand(CommandIDs.insertReproducibilityCell, {
      label: trans.__('Insert Reproducibility Cell'),
      caption: trans.__(
        'Insert a reproducibility cell at the top: seeds and deterministic switches for the frameworks the kernel has (again: replaces it)'
      ),
      icon: args => (args.isPalette ? undefined : diceIcon),
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: () => notebooks.currentWidget !== null,
      execute: async () => {
        const panel = notebooks.currentWidget;
        if (!panel) {
          return;
        }
        const { insertSeedCell } = await actions();
        // What the inspector knows is of this notebook's kernel only while it
        // follows this notebook (not, say, a console focused since).
        await insertSeedCell(panel, inspected() === panel, context);
      }
    });

    app.commands.addCommand(CommandIDs.recordEnvironment, {
      // In the palette, among every extension's commands, it says what of
      // what it records.
      label: args => {
        const update = inspected() && inspector.fingerprint;
        if (args.isPalette) {
          return update
            ? trans.__("Update the Notebook's Environment Fingerprint")
            : trans.__('Record the Kernel Environment in the Notebook');
        }
        return update
          ? trans.__('Update Fingerprint')
          : trans.__('Record Environment');
      },
      caption: trans.__(
        "Save the kernel's environment (environment, Python, key packages, PyTorch build, driver and GPUs) in the notebook's metadata, to check later kernels against"
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      ...onInspectedKernel(async panel => {
        const { recordEnvironment } = await actions();
        await recordEnvironment(panel, context);
      })
    });

    app.commands.addCommand(CommandIDs.exportEnvironmentFile, {
      label: trans.__('Export environment.yml'),
      caption: trans.__(
        "Write the kernel environment's environment.yml into the notebook's folder"
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      ...onInspectedKernel(async panel => {
        const { exportEnvironmentFile } = await actions();
        await exportEnvironmentFile(panel, context);
      })
    });

    const driftWarnings = new NotificationSlots();
    inspector.driftFound.connect((_, drift) => {
      const actions = [
        {
          label: trans.__('Update Fingerprint'),
          caption: trans.__('Record the environment the kernel has now'),
          callback: () => {
            void app.commands.execute(CommandIDs.recordEnvironment);
          }
        }
      ];
      if (app.commands.hasCommand(CommandIDs.openEnvironmentPanel)) {
        actions.unshift({
          label: trans.__('Show'),
          caption: trans.__('Show the Environment side panel'),
          callback: () => {
            void app.commands.execute(CommandIDs.openEnvironmentPanel);
          }
        });
      }
      // One per notebook: a drift found again replaces the last one.
      driftWarnings.show(
        inspector.target?.label ?? '',
        'warning',
        Private.driftMessage(inspector.target?.label ?? '', drift, trans),
        { autoClose: WARNING_AUTO_CLOSE_MS, actions }
      );
    });

    const refreshCommands = () => {
      app.commands.notifyCommandChanged(CommandIDs.recordEnvironment);
      app.commands.notifyCommandChanged(CommandIDs.exportEnvironmentFile);
      app.commands.notifyCommandChanged(CommandIDs.insertReproducibilityCell);
    };
    inspector.changed.connect(refreshCommands);
    notebooks.currentChanged.connect(refreshCommands);

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

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The drift notification: the notebook, the first change, how many more.
   */
  export function driftMessage(
    label: string,
    drift: readonly InspectorFinding[],
    trans: TranslationBundle
  ): string {
    const [first, ...others] = drift;
    return notificationText(
      others.length === 0
        ? trans.__('%1: %2', label, first.title)
        : trans.__(
            '%1: %2, and %3 more differences',
            label,
            first.title,
            others.length
          )
    );
  }
}
