import { expect } from '@jupyterlab/galata';
import { Locator, Page } from '@playwright/test';

import { resetFakeGpu } from './fakeGpu';
import { holdGpuMemory } from './gpuMonitor';
import {
  fact,
  notebookOf,
  TORCH_CPU_KERNEL,
  waitForIdleKernel
} from './testKernels';
import { test } from './fixtures';

/**
 * Jupyter Notebook 7 on the test server (its server extension serves /tree
 * and /notebooks/… beside /lab): its own shell and pages, which galata's page
 * fixture does not drive, so these tests use plain pages.
 */
test.describe('In Jupyter Notebook 7', () => {
  test.afterEach(() => resetFakeGpu());

  test('the file browser page loads every plugin, with no browser error of ours', async ({
    context,
    baseURL
  }) => {
    const page = await context.newPage();
    const errors = watchOurErrors(page);
    await page.goto(`${baseURL}/tree`);
    await appStarted(page);
    await expectAllActivated(page);
    expect(errors).toEqual([]);
  });

  test.setTimeout(120000);

  test("a notebook's page has the GPU and Environment panels, the reproducibility button and the per-cell line", async ({
    context,
    baseURL
  }) => {
    const page = await context.newPage();
    const errors = watchOurErrors(page);
    const folder = `notebook7-${Date.now()}`;
    const notebookPath = `${folder}/train.ipynb`;
    await writeNotebook(page, baseURL!, notebookPath, [
      'x = 1',
      'import time\ntime.sleep(7)  # the kernel takes the GPU memory meanwhile'
    ]);
    try {
      await page.goto(`${baseURL}/notebooks/${notebookPath}`);
      await appStarted(page);
      await waitForIdleKernel(page);
      await expectAllActivated(page);

      // Both panels open from Notebook's View › Left Sidebar menu.
      const gpus = await openSidePanel(page, 'GPU Monitor');
      await expect(
        gpus.getByRole('article', { name: /NVIDIA RTX A5000/ })
      ).toHaveCount(2);
      const environment = await openSidePanel(page, 'Environment');
      await expect(fact(environment, 'PyTorch')).toHaveText(
        '2.13.0+cpu, CPU-only build'
      );
      await expect(
        environment.getByRole('region', { name: 'Findings' })
      ).toContainText('PyTorch is a CPU-only build, but this machine has GPUs');

      // The per-cell line: a cell during which the kernel takes GPU memory.
      // Ctrl+Enter runs the cell in place: Shift+Enter on the last cell would
      // also add a cell below.
      await page.locator('.jp-Notebook-cell').nth(1).click();
      await page.keyboard.press('Control+Enter');
      await page.waitForTimeout(2000);
      await holdGpuMemory(page, baseURL!, notebookPath);
      await expect(
        page
          .locator('.jp-Notebook-cell')
          .nth(1)
          .locator('.jp-GpuMonitor-cellLine')
      ).toHaveText(
        /^GPU 0: peak 21\.9 GiB \(\+21\.9 GiB\), 0 % avg · GPU 1: peak 16\.8 GiB/,
        {
          timeout: 20000
        }
      );

      const cells = await page.locator('.jp-Notebook-cell').count();
      // The reproducibility cell from the notebook's toolbar.
      await page
        .getByRole('button', {
          name: /^Insert a reproducibility cell at the top/
        })
        .click();
      const dialog = page.getByRole('dialog');
      if (await dialog.isVisible({ timeout: 2000 }).catch(() => false)) {
        await dialog.getByRole('button', { name: 'Insert Only' }).click();
      }
      await expect(page.locator('.jp-Notebook-cell')).toHaveCount(cells + 1);
      await expect(page.locator('.jp-Notebook-cell').first()).toContainText(
        'torch.manual_seed(SEED)'
      );
      expect(errors).toEqual([]);
    } finally {
      await endSessions(page, baseURL!, folder);
    }
  });
});

/**
 * The browser's errors on a page that come from this extension: its code
 * (served under .../jupyterlab-gpu-monitor/) or its routes (/gpu-monitor/).
 * Notebook 7.6 itself logs one error on every page, from its shortcuts
 * plugin reading a schema it has not loaded, with or without this extension.
 */
function watchOurErrors(page: Page): string[] {
  const ours = /jupyterlab-gpu-monitor\/|\/gpu-monitor\//;
  const errors: string[] = [];
  page.on('console', message => {
    const text = `${message.text()} at ${message.location().url}`;
    if (message.type() === 'error' && ours.test(text)) {
      errors.push(text);
    }
  });
  page.on('pageerror', error => {
    const text = `${error.message} ${error.stack}`;
    if (ours.test(text)) {
      errors.push(text);
    }
  });
  return errors;
}

/**
 * Wait until Notebook's application has started (its plugins activated).
 */
async function appStarted(page: Page): Promise<void> {
  await page.waitForFunction(() => (window as any).jupyterapp?.started);
  await page.evaluate(() => (window as any).jupyterapp.started);
  await page.waitForSelector('#main-panel');
}

/**
 * Our plugins on this page, each with whether it is activated.
 */
async function ourPlugins(page: Page): Promise<Record<string, boolean>> {
  return page.evaluate(() => {
    const app = (window as any).jupyterapp;
    return Object.fromEntries(
      app
        .listPlugins()
        .filter((id: string) => id.startsWith('jupyterlab-gpu-monitor:'))
        .map((id: string) => [id, app.isPluginActivated(id)])
    );
  });
}

/**
 * Expect every plugin of this extension, each activated.
 */
async function expectAllActivated(page: Page): Promise<void> {
  const plugins = await ourPlugins(page);
  expect(Object.keys(plugins)).toEqual(
    expect.arrayContaining([
      'jupyterlab-gpu-monitor:model',
      'jupyterlab-gpu-monitor:panel',
      'jupyterlab-gpu-monitor:inspector',
      'jupyterlab-gpu-monitor:environment-panel',
      'jupyterlab-gpu-monitor:reproducibility',
      'jupyterlab-gpu-monitor:cells'
    ])
  );
  expect(Object.values(plugins)).not.toContain(false);
}

/**
 * Shut down the kernels of the notebooks in a folder: the server outlives
 * the page.
 */
async function endSessions(
  page: Page,
  baseURL: string,
  folder: string
): Promise<void> {
  const sessions = await (
    await page.request.get(`${baseURL}/api/sessions`)
  ).json();
  for (const session of sessions) {
    if (session.path.startsWith(`${folder}/`)) {
      await page.request.delete(`${baseURL}/api/sessions/${session.id}`);
    }
  }
}

/**
 * Open a panel of the left side area from View › Left Sidebar › Show <name>.
 */
async function openSidePanel(page: Page, name: string): Promise<Locator> {
  await page.getByRole('menuitem', { name: 'View', exact: true }).click();
  await page
    .locator('.lm-Menu-item')
    .filter({ hasText: 'Left Sidebar' })
    .hover();
  const submenu = page.getByRole('menu').filter({ hasText: `Show ${name}` });
  await submenu.getByText(`Show ${name}`, { exact: true }).click();
  const panel = page.getByRole('region', { name, exact: true });
  await expect(panel).toBeVisible();
  return panel;
}

/**
 * Write a notebook of code cells with the torch-cpu kernel, through the
 * contents API.
 */
async function writeNotebook(
  page: Page,
  baseURL: string,
  notebookPath: string,
  sources: string[]
): Promise<void> {
  const folder = notebookPath.split('/')[0];
  await page.request.put(`${baseURL}/api/contents/${folder}`, {
    data: { type: 'directory' }
  });
  const content = notebookOf(TORCH_CPU_KERNEL, sources);
  const answer = await page.request.put(
    `${baseURL}/api/contents/${notebookPath}`,
    { data: { type: 'notebook', format: 'json', content } }
  );
  expect(answer.ok()).toBe(true);
}
