import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator, Page } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * The kernelspec of `.kernel-envs/torch-cpu` (PyTorch's CPU build and numpy),
 * registered by jupyter_server_test_config.py.
 */
export const TORCH_CPU_KERNEL = 'gpu-monitor-torch-cpu';

/**
 * The kernelspec of the venv the drift test makes and changes, registered by
 * jupyter_server_test_config.py.
 */
export const DRIFT_KERNEL = 'gpu-monitor-drift';

/**
 * The environments `make kernel-envs` builds.
 */
export const KERNEL_ENVS =
  process.env.GPU_MONITOR_KERNEL_ENVS ??
  path.resolve(__dirname, '..', '..', '.kernel-envs');

/**
 * A notebook of code cells, never run, that starts the given kernel.
 */
export function notebookOf(kernel: string, sources: string[]): object {
  return {
    cells: sources.map(source => ({
      cell_type: 'code',
      execution_count: null,
      metadata: {},
      outputs: [],
      source
    })),
    metadata: {
      kernelspec: { name: kernel, display_name: kernel, language: 'python' }
    },
    nbformat: 4,
    nbformat_minor: 5
  };
}

/**
 * Write a notebook of code cells that starts the given kernel, open it, and
 * wait until its kernel is idle.
 *
 * @returns the notebook's path
 */
export async function openNotebookWith(
  page: IJupyterLabPageFixture,
  folder: string,
  name: string,
  kernel: string,
  sources: string[] = []
): Promise<string> {
  const notebookPath = `${folder}/${name}`;
  await page.contents.uploadContent(
    JSON.stringify(notebookOf(kernel, sources)),
    'text',
    notebookPath
  );
  // Opened by its command, not through the file browser, whose labels galata
  // looks for in English: this works in any interface language.
  // The command's result, the notebook's widget, stays in the page: it is no
  // value Playwright can bring back.
  await page.evaluate(async path => {
    await (window as any).jupyterapp.commands.execute('docmanager:open', {
      path
    });
  }, notebookPath);
  await expect(page.getByRole('main').getByRole('tab', { name })).toBeVisible();
  await page.notebook.activate(name);
  await waitForIdleKernel(page);
  return notebookPath;
}

/**
 * Wait until the current notebook's kernel is idle (in JupyterLab or in
 * Notebook 7: only the application's shell is asked).
 */
export async function waitForIdleKernel(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      (window as any).jupyterapp.shell.currentWidget?.sessionContext?.session
        ?.kernel?.status === 'idle',
    undefined,
    { timeout: 120000 }
  );
}

/**
 * The venv the drift test changes; the kernelspec `gpu-monitor-drift` runs
 * its Python (see jupyter_server_test_config.py).
 */
export const DRIFT_ENV = path.resolve(__dirname, '..', '.kernels', 'drift-env');

/**
 * Make the drift test's venv hold this version of numpy, creating it first
 * if need be: a venv of the plain test environment's Python that borrows
 * that environment's ipykernel (a `.pth` file), so that only numpy is
 * installed here, from the local wheels pip is configured with.
 */
export function installNumpyInDriftEnv(version: string): void {
  const plainPython = path.join(KERNEL_ENVS, 'plain', 'bin', 'python');
  const driftPython = path.join(DRIFT_ENV, 'bin', 'python');
  if (!fs.existsSync(driftPython)) {
    execFileSync(plainPython, ['-m', 'venv', '--without-pip', DRIFT_ENV]);
    const borrowed = execFileSync(plainPython, [
      '-c',
      "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ])
      .toString()
      .trim();
    const own = execFileSync(driftPython, [
      '-c',
      "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ])
      .toString()
      .trim();
    fs.writeFileSync(path.join(own, 'plain-env.pth'), `${borrowed}\n`);
  }
  execFileSync(
    plainPython,
    [
      '-m',
      'pip',
      '--python',
      driftPython,
      'install',
      '--quiet',
      '--no-deps',
      `numpy==${version}`
    ],
    { stdio: 'inherit', timeout: 180000 }
  );
}

/**
 * The Environment panel's name: its tab's tooltip and its region's label.
 */
const PANEL = 'Environment';

/**
 * Open the Environment panel from its sidebar tab.
 */
export async function openPanel(
  page: IJupyterLabPageFixture
): Promise<Locator> {
  await page.getByRole('tab', { name: PANEL, exact: true }).click();
  const panel = page.getByRole('region', { name: PANEL, exact: true });
  await expect(panel).toBeVisible();
  return panel;
}

/**
 * Open a notebook that starts a kernel (as {@link openNotebookWith}; the
 * torch-cpu test kernel unless `kernel` says otherwise), then the Environment
 * panel, once the kernel answered its probe.
 */
export async function openProbed(
  page: IJupyterLabPageFixture,
  folder: string,
  name: string,
  { kernel = TORCH_CPU_KERNEL, sources = [] as string[] } = {}
): Promise<{ panel: Locator; path: string }> {
  const path = await openNotebookWith(page, folder, name, kernel, sources);
  const panel = await openPanel(page);
  await expect(inspection(panel)).toHaveText(
    `The kernel of ${name} answered the probe.`
  );
  return { panel, path };
}

/**
 * Where the inspection stands: the panel's first status line.
 */
export function inspection(panel: Locator): Locator {
  return panel.getByRole('status').first();
}

/**
 * The value of a fact of the kernel's environment.
 */
export function fact(panel: Locator, name: string): Locator {
  return panel
    .getByRole('term')
    .filter({ hasText: new RegExp(`^${name}$`) })
    .first()
    .locator('xpath=following-sibling::dd[1]');
}
