import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { failLike, resetFakeGpu } from './fakeGpu';
import { test } from './fixtures';

/**
 * The plugin that adds the server-status command.
 */
const PLUGIN_ID = 'jupyterlab-gpu-monitor:server-status';

/**
 * The palette label of the server-status command.
 */
const COMMAND_LABEL = 'Show GPU Monitor Server Status';

// Go to JupyterLab only once the console is watched, so that errors logged
// while the extension loads are caught too.
test.use({ autoGoto: false });

test.describe('GPU monitor frontend', () => {
  test('JupyterLab starts with the extension activated and no browser error', async ({
    page
  }) => {
    const errors: string[] = [];
    page.on('console', message => {
      if (message.type() === 'error') {
        errors.push(message.text());
      }
    });
    page.on('pageerror', error => {
      errors.push(error.message);
    });

    await page.goto();

    const activated = await page.evaluate(
      id => window.jupyterapp.isPluginActivated(id),
      PLUGIN_ID
    );
    expect(activated).toBe(true);
    expect(errors).toEqual([]);
  });

  test('the palette command shows the source and versions the server reads', async ({
    page
  }) => {
    await page.goto();
    const dialog = await openServerStatus(page);
    // The replayed capture: two RTX A5000s, driver 590.44.01, CUDA 13.1.
    await expect(dialog).toContainText('nvidia-smi');
    await expect(dialog).toContainText('590.44.01');
    await expect(dialog).toContainText('13.1');
    await expect(dialog.getByRole('alert')).toHaveCount(0);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toHaveCount(0);
  });

  test('the palette command shows the error and hint the server reports', async ({
    page,
    baseURL
  }) => {
    failLike('nvml-driver-library-version-mismatch.txt', '18');
    try {
      await page.goto();
      let status: any = null;
      await expect
        .poll(async () => {
          const response = await page.request.get(
            `${baseURL}/gpu-monitor/api/status`
          );
          status = await response.json();
          return status.error?.kind;
        })
        .toBe('version_mismatch');

      const dialog = await openServerStatus(page);
      const serverError = dialog.getByRole('alert');
      await expect(serverError).toContainText(status.error.message);
      // The hint's commands are code: the text without their backticks.
      await expect(serverError).toContainText(
        status.error.hint.replace(/`/g, '')
      );
      await expect(dialog).toContainText(`${status.interval_seconds} s`);
      await dialog.getByRole('button', { name: 'Close' }).click();
    } finally {
      resetFakeGpu();
    }
  });
});

/**
 * Run the server-status command from the command palette; its dialog.
 */
async function openServerStatus(
  page: IJupyterLabPageFixture
): Promise<Locator> {
  await page.keyboard.press('Control+Shift+C');
  await page.getByRole('textbox', { name: 'SEARCH' }).fill(COMMAND_LABEL);
  await page.getByRole('menuitem', { name: COMMAND_LABEL }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText('GPU Monitor Server Status');
  return dialog;
}
