import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';

import { cutOffTexts, lowContrastTexts } from './layout';
import { test } from './fixtures';

/**
 * The extension's dialogs, each opened by its command: what it asks or
 * tells must be readable in both themes, nothing cut off.
 */
test.describe('Dialogs', () => {
  for (const theme of ['light', 'dark']) {
    test(`readable in the ${theme} theme: the server's status, a kernel action's question and its failure`, async ({
      page
    }) => {
      if (theme === 'dark') {
        await page.theme.setDarkTheme();
      }
      await run(page, 'gpu-monitor:show-server-status');
      const status = page.locator('.jp-Dialog-content');
      await expect(status.getByText('Source in use')).toBeVisible();
      await expectReadable(status);
      await status.getByRole('button', { name: 'Close' }).click();
      await expect(status).toHaveCount(0);

      // A kernel that is gone by the time the user says yes: asked, then
      // told that it failed.
      await run(page, 'gpu-monitor:interrupt-kernel', {
        kernelId: 'f1d1b2a4-0000-4000-8000-000000000000',
        label: 'train.ipynb'
      });
      const dialog = page.locator('.jp-Dialog-content');
      await expect(dialog).toContainText(
        'Interrupt the kernel of train.ipynb?'
      );
      await expectReadable(dialog);
      await dialog.locator('.jp-mod-warn').click();
      await expect(dialog.locator('.jp-mod-warn')).toHaveCount(0);
      await expect(dialog).toContainText(/train\.ipynb/);
      await expectReadable(dialog);
      await dialog.locator('.jp-Dialog-button').last().click();
      await expect(dialog).toHaveCount(0);
    });
  }
});

/**
 * Run a command of the extension without waiting for its dialog to close.
 */
async function run(
  page: IJupyterLabPageFixture,
  command: string,
  args: Record<string, string> = {}
): Promise<void> {
  await page.evaluate(
    ({ command, args }) => {
      void (window as any).jupyterapp.commands.execute(command, args);
    },
    { command, args }
  );
}

/**
 * Every text of the dialog whole and at WCAG AA against what it is drawn on.
 */
async function expectReadable(
  dialog: ReturnType<IJupyterLabPageFixture['locator']>
): Promise<void> {
  // The dialog's opening animation done.
  await dialog.page().waitForTimeout(300);
  expect(await lowContrastTexts(dialog)).toEqual([]);
  expect(await cutOffTexts(dialog)).toEqual([]);
}
