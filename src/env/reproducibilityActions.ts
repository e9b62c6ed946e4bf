import { JupyterFrontEnd } from '@jupyterlab/application';
import {
  Dialog,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';

import { writeFingerprint } from './fingerprintRecord';
import { notificationText } from '../notification';
import type { Framework } from '../seed/frameworks';
import { IEnvironmentInspector } from '../tokens';
import { EnvironmentFileStyle } from '../restapi/envs';

/**
 * What the reproducibility commands do to a notebook: insert the seed cell,
 * record the environment fingerprint, write environment.yml beside it.
 * Loaded at the first command, not when JupyterLab opens.
 */

/**
 * The settings of the reproducibility tools.
 */
export interface IReproducibilitySettings {
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
 * What the commands work with.
 */
export interface IReproducibilityContext {
  app: JupyterFrontEnd;
  inspector: IEnvironmentInspector;
  settings: IReproducibilitySettings;
  trans: TranslationBundle;
}

/**
 * Insert (or replace) the reproducibility cell at the top of the notebook,
 * for the frameworks its kernel has when the inspector follows it.
 */
export async function insertSeedCell(
  panel: NotebookPanel,
  following: boolean,
  { inspector, settings, trans }: IReproducibilityContext
): Promise<void> {
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
  const { frameworksOf, seedCellSource } = await import('../seed/generator');
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
    const choice = await askRestart(trans);
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

/**
 * Record the kernel's environment in the notebook's metadata.
 */
export async function recordEnvironment(
  panel: NotebookPanel,
  { inspector, trans }: IReproducibilityContext
): Promise<void> {
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
    trans.__('Recorded the environment in the notebook; save it to keep it.'),
    { autoClose: 4000 }
  );
}

/**
 * Write the kernel environment's environment.yml into the notebook's folder.
 */
export async function exportEnvironmentFile(
  panel: NotebookPanel,
  { app, inspector, settings, trans }: IReproducibilityContext
): Promise<void> {
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
    if (await exists(contents, path)) {
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
      trans.__('Wrote the environment.yml of %1 to %2', environment.name, path)
    ),
    { autoClose: 5000 }
  );
}

/**
 * Ask whether to restart a kernel whose CUDA is initialised: true to insert
 * and restart, false to insert only, null to do nothing.
 */
async function askRestart(trans: TranslationBundle): Promise<boolean | null> {
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
async function exists(
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
