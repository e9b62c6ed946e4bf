import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { writeFingerprint } from '../env/fingerprintRecord';
import { diceIcon } from '../icons';
import { notificationText, WARNING_AUTO_CLOSE_MS } from '../notification';
import { NotificationSlots } from '../notificationSlots';
import type { Framework } from '../seed/frameworks';
import {
  CommandIDs,
  IEnvironmentInspector,
  InspectorFinding,
  TRANSLATION_DOMAIN
} from '../tokens';
import { EnvironmentFileStyle } from '../restapi/envs';
import { followSettings } from './settings';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * The settings of the reproducibility tools.
 */
interface IReproducibilitySettings {
  /**
   * The seed of the reproducibility cell.
   */
  seed: number;
  /**
   * Whether the cell turns on the strict deterministic switches.
   */
  strict: boolean;
  /**
   * The frameworks the cell seeds even when the kernel does not have them.
   */
  alwaysInclude: Framework[];
  /**
   * The style of environment.yml written next to the notebook.
   */
  exportStyle: EnvironmentFileStyle;
}

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
    let settings: IReproducibilitySettings = {
      ...SETTINGS_DEFAULTS.reproducibility,
      alwaysInclude: []
    };
    void followSettings(registry, reproducibilityPlugin.id, loaded => {
      settings = loaded.composite as unknown as IReproducibilitySettings;
    });

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
        // What the inspector knows is of this notebook's kernel only while it
        // follows this notebook (not, say, a console focused since).
        const following = inspected() === panel;
        if (following && panel.sessionContext.session?.kernel) {
          await inspector.refresh();
        }
        if (following && inspector.phase === 'no-probe') {
          Notification.warning(
            trans.__(
              "The reproducibility cell is Python, and this notebook's kernel is not."
            ),
            { autoClose: 5000 }
          );
          return;
        }
        const { frameworksOf, seedCellSource } =
          await import('../seed/generator');
        const { upsertSeedCell } = await import('../seed/cell');
        const probe = following ? inspector.probe : null;
        const recorded = following ? inspector.serverPackages : null;
        const packages = probe?.packages ?? recorded ?? {};
        const frameworks = frameworksOf(packages, settings.alwaysInclude);
        const record = {
          seed: settings.seed,
          strict: settings.strict,
          frameworks
        };
        let restart = false;
        if (
          settings.strict &&
          frameworks.includes('torch') &&
          probe?.torch?.cuda_initialized
        ) {
          const choice = await Private.askRestart(trans);
          if (choice === null) {
            return;
          }
          restart = choice;
        }
        const { index } = upsertSeedCell(
          panel.context.model,
          seedCellSource(record, trans),
          record
        );
        panel.content.activeCellIndex = index;
        if (restart) {
          await panel.sessionContext.restartKernel();
        }
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
        await inspector.refresh();
        const fingerprint = await inspector.currentFingerprint();
        if (!fingerprint) {
          Notification.warning(
            notificationText(
              trans.__(
                'The kernel did not answer the probe, so nothing was recorded. %1',
                inspector.error ?? ''
              )
            ),
            { autoClose: 5000 }
          );
          return;
        }
        writeFingerprint(panel.context.model, fingerprint);
        Notification.success(
          trans.__(
            'Recorded the environment in the notebook; save it to keep it.'
          ),
          { autoClose: 4000 }
        );
      })
    });

    app.commands.addCommand(CommandIDs.exportEnvironmentFile, {
      label: trans.__('Export environment.yml'),
      caption: trans.__(
        "Write the kernel environment's environment.yml into the notebook's folder"
      ),
      describedBy: { args: { type: 'object', properties: {} } },
      ...onInspectedKernel(async panel => {
        if (!inspector.environment) {
          await inspector.refresh();
        }
        const environment = inspector.environment;
        const title = trans.__('Export environment.yml');
        if (!environment) {
          await showErrorMessage(
            title,
            trans.__(
              "The server does not list this kernel's environment (%1): it knows conda environments and the venvs kernelspecs launch.",
              inspector.report?.prefix ?? trans.__('unknown')
            )
          );
          return;
        }
        const path = PathExt.join(
          PathExt.dirname(panel.context.localPath),
          'environment.yml'
        );
        const contents = app.serviceManager.contents;
        try {
          const text = await inspector.environments.exportFile(
            environment.id,
            settings.exportStyle
          );
          if (await Private.exists(contents, path)) {
            const answer = await showDialog({
              title,
              body: trans.__('%1 exists. Replace it?', path),
              buttons: [
                Dialog.cancelButton({ label: trans.__('Cancel') }),
                Dialog.warnButton({ label: trans.__('Replace') })
              ]
            });
            if (!answer.button.accept) {
              return;
            }
          }
          await contents.save(path, {
            type: 'file',
            format: 'text',
            content: text
          });
        } catch (error) {
          await showErrorMessage(title, error as Error);
          return;
        }
        Notification.success(
          notificationText(
            trans.__(
              'Wrote the environment.yml of %1 to %2',
              environment.name,
              path
            )
          ),
          { autoClose: 5000 }
        );
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
   * Ask whether to restart a kernel whose CUDA is initialised: true to insert
   * and restart, false to insert only, null to do nothing.
   */
  export async function askRestart(
    trans: TranslationBundle
  ): Promise<boolean | null> {
    const restart = Dialog.warnButton({
      label: trans.__('Insert and Restart')
    });
    const answer = await showDialog({
      title: trans.__('CUDA is already initialised in this kernel'),
      body: trans.__(
        'Strict mode sets CUBLAS_WORKSPACE_CONFIG, which CUDA reads only when it initialises: it takes effect after a restart. Insert the cell and restart the kernel? Run the cell first after the restart.'
      ),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.okButton({
          label: trans.__('Insert Only'),
          displayType: 'default'
        }),
        restart
      ]
    });
    if (!answer.button.accept) {
      return null;
    }
    return answer.button.label === restart.label;
  }

  /**
   * Whether a file exists.
   */
  export async function exists(
    contents: JupyterFrontEnd['serviceManager']['contents'],
    path: string
  ): Promise<boolean> {
    try {
      await contents.get(path, { content: false });
      return true;
    } catch {
      return false;
    }
  }

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
