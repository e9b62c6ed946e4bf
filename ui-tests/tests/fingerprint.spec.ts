import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { join } from 'path';

import {
  DRIFT_ENV,
  DRIFT_KERNEL,
  installNumpyInDriftEnv,
  openProbed
} from './testKernels';
import { test } from './fixtures';

test.describe('Environment fingerprint', () => {
  test('record a fingerprint, change a package, reopen: the drift shows', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(240000);
    installNumpyInDriftEnv('2.2.6');
    const { panel, path } = await openProbed(page, tmpPath, 'drift.ipynb', {
      kernel: DRIFT_KERNEL
    });
    const fingerprint = panel.getByRole('region', { name: 'Fingerprint' });
    // The palette names the same command with its context.
    await page.keyboard.press('Control+Shift+C');
    await page
      .getByRole('textbox', { name: 'SEARCH' })
      .fill('Record the Kernel Environment');
    await expect(
      page.getByRole('menuitem', {
        name: 'Record the Kernel Environment in the Notebook'
      })
    ).toBeVisible();
    await page.keyboard.press('Escape');
    await fingerprint
      .getByRole('button', { name: 'Record Environment' })
      .click();
    await expect(fingerprint).toContainText('numpy 2.2.6');
    await expect(fingerprint.getByRole('status')).toHaveText(
      'The kernel matches the fingerprint.'
    );
    await page.notebook.save();
    await page.notebook.close();
    await page.kernel.shutdownAll();

    installNumpyInDriftEnv('2.3.5');
    // Opened while the file browser is hidden behind the panel.
    await page.evaluate(async notebook => {
      await window.jupyterapp.commands.execute('docmanager:open', {
        path: notebook
      });
    }, path);

    await expect(
      page.getByRole('alert').filter({
        hasText: 'drift.ipynb: numpy 2.2.6 → 2.3.5 since the fingerprint'
      })
    ).toBeVisible({ timeout: 120000 });
    const drift = panel
      .getByRole('list', { name: 'Findings' })
      .getByRole('listitem')
      .filter({ hasText: 'numpy 2.2.6 → 2.3.5 since the fingerprint' });
    // Through the kernel's own Python: a bare pip may be another env's.
    await expect(drift.getByRole('code')).toHaveText(
      `"${join(DRIFT_ENV, 'bin', 'python')}" -m pip install "numpy==2.2.6"`
    );
    await expect(fingerprint.getByRole('status')).toHaveText(
      'The kernel differs from the fingerprint: see the findings.'
    );

    await fingerprint
      .getByRole('button', { name: 'Update Fingerprint' })
      .click();
    await expect(fingerprint).toContainText('numpy 2.3.5');
    await expect(fingerprint.getByRole('status')).toHaveText(
      'The kernel matches the fingerprint.'
    );
    await expect(drift).toHaveCount(0);
  });

  test("exports environment.yml into the notebook's folder, asking before replacing it", async ({
    page,
    tmpPath
  }) => {
    const { panel } = await openProbed(page, tmpPath, 'export.ipynb');
    const exportFile = panel
      .getByRole('region', { name: 'Fingerprint' })
      .getByRole('button', { name: 'Export environment.yml' });
    const file = `${tmpPath}/environment.yml`;

    await exportFile.click();
    await expect.poll(() => page.contents.fileExists(file)).toBe(true);
    expect(await read(page, file)).toContain('      - torch==2.13.0+cpu\n');

    await page.contents.uploadContent('name: mine\n', 'text', file);
    await exportFile.click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(`${file} exists. Replace it?`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await read(page, file)).toBe('name: mine\n');

    await exportFile.click();
    await dialog.getByRole('button', { name: 'Replace' }).click();
    await expect.poll(() => read(page, file)).toContain('name: torch-cpu\n');
  });
});

/**
 * The text of a file on the server.
 */
async function read(
  page: IJupyterLabPageFixture,
  path: string
): Promise<string> {
  const response = await page.request.get(
    `/api/contents/${path}?type=file&format=text&content=1`
  );
  return (await response.json()).content;
}
