import { expect } from '@jupyterlab/galata';

import { holdGpuMemory, openPanel, test } from './gpuMonitor';
import { openNotebookWith, TORCH_CPU_KERNEL } from './testKernels';

test.describe('releasing the GPU memory a kernel caches', () => {
  test('a kernel that never imported torch says so, and gets nothing imported nor a cell number', async ({
    page,
    baseURL,
    tmpPath
  }) => {
    const name = 'no-torch.ipynb';
    // torch is installed in this kernel's environment, but never imported.
    const notebookPath = await openNotebookWith(
      page,
      tmpPath,
      name,
      TORCH_CPU_KERNEL,
      ["import sys\n'torch' in sys.modules"]
    );
    await holdGpuMemory(page, baseURL!, notebookPath);

    const panel = await openPanel(page);
    const row = panel
      .getByRole('table', { name: 'GPU memory of my kernels' })
      .getByRole('row', { name: new RegExp(name) });
    await row
      .getByRole('button', {
        name: `Release the cached GPU memory of ${name}`
      })
      .click();

    await expect(
      page.getByRole('alert').filter({
        hasText: `${name} has not imported torch: nothing to release`
      })
    ).toBeVisible();
    // The release ran silently: the notebook's first cell is still [1], and
    // torch is still not imported.
    await page.notebook.activate(name);
    await page.notebook.runCell(0);
    const cell = page.getByRole('main').locator('.jp-CodeCell').first();
    await expect(cell.locator('.jp-InputPrompt')).toHaveText('[1]:');
    await expect(cell.locator('.jp-OutputArea-output')).toHaveText('False');
  });
});
