import { expect } from '@jupyterlab/galata';
import * as path from 'path';

import { replaceGpus, V100S_X8 } from './fakeGpu';
import { holdGpuMemory, openPanel, PANEL, test } from './gpuMonitor';
import { openNotebookWith, openProbed } from './testKernels';

/**
 * Where the README's and the user guide's screenshots are:
 * `README_SCREENSHOTS=1 jlpm playwright test tests/readme.spec.ts` (make
 * screenshots) refreshes them. The other tests compare theirs with the
 * references kept next to them, masked where readings move.
 */
const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

test.use({ viewport: { width: 1600, height: 1000 } });

test.describe('README and user guide screenshots', () => {
  test.skip(
    !process.env.README_SCREENSHOTS,
    'only when README_SCREENSHOTS is set'
  );

  test('the panel and the dashboard with the real 8× V100S capture, light and dark', async ({
    page,
    baseURL
  }) => {
    test.setTimeout(180000);
    await replaceGpus(page, baseURL!, V100S_X8);
    try {
      await page.getByRole('tab', { name: PANEL }).click();
      const panel = page.getByRole('region', { name: PANEL });
      await expect(panel.getByRole('article')).toHaveCount(8);
      await page.evaluate(() =>
        (window as any).jupyterapp.commands.execute(
          'gpu-monitor:open-dashboard'
        )
      );
      const dashboard = page.getByRole('tabpanel', { name: 'GPU Dashboard' });
      // The GPUs' four charts, what they receive over PCIe, and the
      // machine's three.
      await expect(dashboard.locator('canvas')).toHaveCount(4 + 1 + 3);
      // A minute of readings, in a window of a minute: the charts full.
      await dashboard.getByRole('combobox').selectOption({ label: '1 min' });
      await page.waitForTimeout(65000);
      for (const theme of ['light', 'dark']) {
        if (theme === 'dark') {
          await page.theme.setDarkTheme();
          await page.waitForTimeout(1000);
        }
        await panel.screenshot({
          path: path.join(SCREENSHOTS, `panel-8x-v100s-${theme}.png`)
        });
        await dashboard.screenshot({
          path: path.join(SCREENSHOTS, `dashboard-8x-v100s-${theme}.png`)
        });
      }
    } finally {
      await replaceGpus(page, baseURL!, null);
    }
  });

  test("the user guide's pictures: a cell's line, the status bar and the Environment panel", async ({
    page,
    baseURL,
    tmpPath
  }) => {
    test.setTimeout(180000);
    // The kernel takes the two A5000s' memory during its second cell: the
    // line under it, and the status bar about its GPU.
    const notebookPath = await openNotebookWith(
      page,
      tmpPath,
      'train.ipynb',
      'python3',
      ['import time', 'time.sleep(7)  # the kernel takes the GPU memory']
    );
    await page.notebook.runCell(0);
    await page.notebook.runCell(1, { wait: false });
    await page.waitForTimeout(2000);
    await holdGpuMemory(page, baseURL!, notebookPath);
    await page.notebook.waitForRun(1);
    const cell = await page.notebook.getCellLocator(1);
    await expect(cell!.locator('.jp-GpuMonitor-cellLine')).toBeVisible();
    await cell!.screenshot({ path: path.join(SCREENSHOTS, 'cell-line.png') });

    await openPanel(page);
    const statusBar = page.locator('#jp-main-statusbar');
    // About the GPUs the notebook's kernel uses, once the server joined it.
    await expect(page.locator('.jp-GpuMonitor-statusItem')).toHaveClass(
      /jp-mod-kernel/
    );
    await statusBar.screenshot({
      path: path.join(SCREENSHOTS, 'status-bar.png')
    });

    // PyTorch's CPU build on a server with GPUs: the finding and its fix.
    const { panel: environment } = await openProbed(
      page,
      tmpPath,
      'torch.ipynb'
    );
    await environment.screenshot({
      path: path.join(SCREENSHOTS, 'environment-panel.png')
    });
  });
});
