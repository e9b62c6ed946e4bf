import { expect, test } from '@jupyterlab/galata';

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

  test('the palette command shows the error and hint the server reports', async ({
    page,
    baseURL
  }) => {
    await page.goto();
    const response = await page.request.get(
      `${baseURL}/gpu-monitor/api/status`
    );
    expect(response.ok()).toBe(true);
    const status = await response.json();

    await page.keyboard.press('Control+Shift+C');
    await page.getByRole('textbox', { name: 'SEARCH' }).fill(COMMAND_LABEL);
    await page.getByRole('menuitem', { name: COMMAND_LABEL }).click();

    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('GPU Monitor Server Status');
    // This machine has no GPU and no nvidia-smi: the server says why.
    expect(status.error).not.toBeNull();
    const serverError = dialog.getByRole('alert');
    await expect(serverError).toContainText(status.error.message);
    await expect(serverError).toContainText(status.error.hint);
    await expect(dialog).toContainText(`${status.interval_seconds} s`);

    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toHaveCount(0);
  });
});
