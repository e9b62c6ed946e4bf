import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { resetFakeGpu } from './fakeGpu';
import {
  holdGpuMemory,
  openPanel,
  releaseGpuMemory,
  T4_PID,
  T4_XML,
  test
} from './gpuMonitor';
import { openNotebookWith } from './testKernels';

test.describe('which cell used the GPU', () => {
  test('a cell during which the kernel takes GPU memory shows its peak and what it added under it, and its run as a band on the charts', async ({
    page,
    baseURL,
    tmpPath
  }) => {
    const notebookPath = await openNotebookWith(
      page,
      tmpPath,
      'train.ipynb',
      'python3',
      [
        'import time',
        'time.sleep(7)  # the kernel takes the GPU memory meanwhile'
      ]
    );
    await page.notebook.runCell(0);
    await expect(cellLine(page, 0)).toBeHidden();

    // The kernel holds nothing when the cell starts, 38.7 GiB from the
    // reads after the fake nvidia-smi names it.
    await page.notebook.runCell(1, { wait: false });
    await page.waitForTimeout(2000);
    await holdGpuMemory(page, baseURL!, notebookPath);
    await page.notebook.waitForRun(1);

    const line = cellLine(page, 1);
    await expect(line).toHaveText(
      /^GPU 0: peak 21\.9 GiB \(\+21\.9 GiB\), 0 % avg · GPU 1: peak 16\.8 GiB \(\+16\.8 GiB\), 0 % avg · 7\.\d s/
    );
    // The memory came while the GPUs computed nothing, as when a model
    // loads: no data-loading hint (that needs work between the waits).
    await expect(line).not.toContainText('GPU under');

    const panel = await openPanel(page);
    await panel.getByRole('combobox').selectOption({ label: '1 min' });
    const utilization = panel.getByRole('figure', { name: 'Utilization (%)' });
    const chart = utilization.getByRole('img');
    // Both runs: the first too short to measure, the second measured.
    await expect(chart).toHaveAttribute('aria-label', /, 2 cell runs shaded$/);

    // Point along the chart until the band of the measured run is named.
    const band = utilization.getByText('Cell [2] time.sleep(7)', {
      exact: false
    });
    const box = (await chart.boundingBox())!;
    await page.notebook.selectCells(0);
    for (
      let x = box.x + box.width - 2;
      x > box.x && !(await band.isVisible());
      x -= 3
    ) {
      await page.mouse.move(x, box.y + box.height / 2);
    }
    await expect(band).toHaveText(
      'Cell [2] time.sleep(7)  # the kernel takes the GPU memory meanwhile'
    );
    await page.mouse.down();
    await page.mouse.up();

    await expect(await page.notebook.getCellLocator(1)).toHaveClass(
      /jp-mod-active/
    );
  });

  test('the line follows what each cell added as the captures change, and none for a cell that did not use the GPU; the notebook keeps its need and warns when reopened without room', async ({
    page,
    baseURL,
    tmpPath
  }) => {
    const name = 'fit-check.ipynb';
    const notebookPath = await openNotebookWith(
      page,
      tmpPath,
      name,
      'python3',
      [
        'import time',
        'time.sleep(5)  # takes the two A5000',
        'time.sleep(3)  # holds them, uses neither',
        'time.sleep(5)  # takes the T4'
      ]
    );
    await page.notebook.runCell(0);

    /**
     * Run a cell during which the kernel takes a capture's memory.
     */
    async function runTaking(cell: number, take: () => Promise<unknown>) {
      await page.notebook.runCell(cell, { wait: false });
      await page.waitForTimeout(1500);
      await take();
      await page.notebook.waitForRun(cell);
    }

    await runTaking(1, () => holdGpuMemory(page, baseURL!, notebookPath));
    await expect(cellLine(page, 1)).toHaveText(
      /^GPU 0: peak 21\.9 GiB \(\+21\.9 GiB\), 0 % avg · GPU 1: peak 16\.8 GiB \(\+16\.8 GiB\), 0 % avg · 5\.\d s/
    );

    await page.notebook.runCell(2);

    // The T4 in place of the two A5000, none of its memory the kernel's yet.
    await releaseGpuMemory(page, baseURL!, notebookPath, T4_XML);
    await runTaking(3, () =>
      holdGpuMemory(page, baseURL!, notebookPath, {
        xml: T4_XML,
        pid: T4_PID,
        memoryMiB: 1005
      })
    );
    await expect(cellLine(page, 3)).toHaveText(
      /^GPU 0 · peak 1005 MiB \(\+1005 MiB\) · 0 % avg · 5\.\d s/
    );
    // Measured before the cell after it (the figures come in order), but the
    // kernel held what it took while the GPUs idled: nothing to tell.
    await expect(cellLine(page, 2)).toBeHidden();

    await page.notebook.save();
    const saved = await page.request.get(
      `${baseURL}/api/contents/${notebookPath}?content=1`
    );
    const cells = (await saved.json()).content.cells;
    expect(cells[0].metadata.gpu_monitor).toBeUndefined();
    expect(cells[1].metadata.gpu_monitor.last_run).toMatchObject({
      peak_memory_mib: 39676,
      mean_utilization: 0,
      gpu_name: 'NVIDIA RTX A5000',
      gpu_count: 2
    });
    expect(cells[2].metadata.gpu_monitor.last_run).toMatchObject({
      peak_memory_mib: 39676,
      gpu_count: 2
    });
    expect(cells[3].metadata.gpu_monitor.last_run).toMatchObject({
      peak_memory_mib: 1005,
      gpu_name: 'Tesla T4',
      gpu_count: 1
    });
    expect(cells[3].metadata.gpu_monitor.last_run.duration_seconds).toBeCloseTo(
      5,
      0
    );

    // Back to the two A5000, where the kernel no longer holds anything:
    // GPU 0 has 1.6 GiB free, GPU 1 6.7 GiB.
    await page.notebook.close();
    resetFakeGpu();
    await expect
      .poll(async () => {
        const response = await page.request.get(
          `${baseURL}/gpu-monitor/api/gpus`
        );
        const gpus = (await response.json()).gpus;
        return gpus.map((gpu: any) => [gpu.name, gpu.processes[0]?.kernel_id]);
      })
      .toEqual([
        ['NVIDIA RTX A5000', null],
        ['NVIDIA RTX A5000', null]
      ]);

    await page.notebook.openByPath(notebookPath);
    const warning =
      'fit-check.ipynb needed 21.9 GiB, 16.8 GiB on its 2 GPUs at its peak; GPU 0 has only 1.6 GiB free. No GPU has that much free now.';
    await expect(page.getByText(warning)).toBeVisible();
    const panel = await openPanel(page);
    await expect(
      panel.getByRole('region', { name: `GPU need of ${name}` })
    ).toHaveText(
      `${name} needed 38.7 GiB at its peak on 2 × NVIDIA RTX A5000.GPU 0 has only 1.6 GiB free. No GPU has that much free now.`
    );
    const notifications = await page.evaluate(() =>
      window.galata.getNotifications()
    );
    expect(
      notifications.filter(notification => notification.message === warning)
    ).toHaveLength(1);
  });

  test('a notebook reloaded while its own kernel holds the GPUs it needs is never told it does not fit', async ({
    page,
    baseURL,
    tmpPath
  }) => {
    // Six reloads of JupyterLab, each watched for 3 s: twice the usual time.
    test.setTimeout(120_000);
    const name = 'reload-fit.ipynb';
    const notebookPath = await openNotebookWith(
      page,
      tmpPath,
      name,
      'python3',
      ['import time', 'time.sleep(5)  # takes the two A5000']
    );
    await page.notebook.runCell(0);
    try {
      await page.notebook.runCell(1, { wait: false });
      await page.waitForTimeout(1500);
      await holdGpuMemory(page, baseURL!, notebookPath);
      await page.notebook.waitForRun(1);
      await expect(cellLine(page, 1)).toHaveText(/^GPU 0: peak 21\.9 GiB/);
      await page.notebook.save();

      // 21.9 and 16.8 GiB on two GPUs with 1.6 and 6.7 GiB free: it fits
      // only because its own kernel holds them.
      for (let reload = 0; reload < 6; reload++) {
        // Not the launcher, which Galata waits for by default: the notebook.
        await page.reload({ waitForIsReady: false });
        await expect(page.locator('.jp-NotebookPanel')).toBeVisible();
        await expect(
          page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')
        ).toBeVisible();
        await page.waitForTimeout(3000);
        const notifications = await page.evaluate(() =>
          window.galata.getNotifications()
        );
        expect(
          notifications
            .map(notification => notification.message)
            .filter(message => message.includes('at its peak'))
        ).toEqual([]);
      }
    } finally {
      resetFakeGpu();
    }
  });
});

/**
 * The GPU line under a cell of the current notebook.
 */
function cellLine(page: IJupyterLabPageFixture, index: number): Locator {
  return page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-cell')
    .nth(index)
    .locator('.jp-GpuMonitor-cellLine');
}
