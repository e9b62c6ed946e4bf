import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';

import { closeMainTab, panelScreenshot } from './gpuMonitor';
import { chooseLanguage } from './language';
import { cutOffTexts } from './layout';
import {
  inspection,
  KERNEL_ENVS,
  openNotebookWith,
  TORCH_CPU_KERNEL
} from './testKernels';
import { test } from './fixtures';

/**
 * Open a side panel from its tab; the panel.
 */
async function openSidePanel(
  page: IJupyterLabPageFixture,
  name: string
): Promise<ReturnType<IJupyterLabPageFixture['getByRole']>> {
  await page.getByRole('tab', { name, exact: true }).click();
  const panel = page.getByRole('region', { name, exact: true });
  await expect(panel).toBeVisible();
  return panel;
}

test.describe('In Simplified Chinese', () => {
  // The language is the real setting, as the server reads it for its own
  // messages: no mocked settings here, and English is put back at the end.
  test.use({ mockSettings: false });

  test('the GPU panel, the Environment panel and the seed cell speak Chinese; English comes back', async ({
    page,
    tmpPath
  }) => {
    // Two reloads, a kernel start, a torch import and the dashboard.
    test.setTimeout(300000);
    try {
      await chooseLanguage(page, 'zh_CN', 'GPU 监控');
      await openNotebookWith(page, tmpPath, 'zh.ipynb', TORCH_CPU_KERNEL);

      const gpus = await openSidePanel(page, 'GPU 监控');
      await expect(
        gpus.getByRole('heading', { name: 'GPU 监控', level: 2 })
      ).toBeVisible();
      await expect(
        gpus.getByRole('meter', { name: '显存' }).first()
      ).toHaveAttribute('aria-valuetext', /^\d+\.\d \/ 24\.0 GiB$/);
      await expect(
        gpus.getByRole('table', { name: 'GPU 上的进程' })
      ).toBeVisible();
      await expect(
        gpus.getByRole('columnheader', { name: '进程' })
      ).toBeVisible();
      await page.waitForTimeout(500);
      expect(await panelScreenshot(gpus, /各 GPU 的/)).toMatchSnapshot(
        'gpu-monitor-panel-zh-cn.png'
      );
      // Nothing cut off in Chinese either, at the default width and wider.
      expect(await cutOffTexts(gpus)).toEqual([]);
      await page.sidebar.setWidth(500, 'left');
      await page.waitForTimeout(300);
      expect(await cutOffTexts(gpus)).toEqual([]);
      expect(await panelScreenshot(gpus, /各 GPU 的/)).toMatchSnapshot(
        'gpu-monitor-panel-500-zh-cn.png'
      );
      await page.sidebar.setWidth(250, 'left');

      await gpus.getByRole('button', { name: '打开 GPU 仪表板' }).click();
      const dashboard = page.getByRole('tabpanel', { name: 'GPU 仪表板' });
      // The GPUs' four charts and PCIe, the machine's three.
      await expect(dashboard.locator('canvas')).toHaveCount(5 + 3);
      await expect(
        dashboard.getByRole('button', { name: '暂停' })
      ).toBeVisible();
      expect(await cutOffTexts(dashboard)).toEqual([]);
      expect(
        await dashboard.screenshot({
          animations: 'disabled',
          // JupyterLab's own notifications may sit over its corner.
          mask: [
            dashboard.getByRole('img', { name: /各 GPU 的/ }),
            // This machine's live readings.
            dashboard.getByRole('region', { name: '本机' }),
            page.locator('.Toastify__toast-container')
          ]
        })
      ).toMatchSnapshot('gpu-dashboard-zh-cn.png');
      await closeMainTab(page, 'GPU 仪表板');

      const environment = await openSidePanel(page, '环境');
      await expect(inspection(environment)).toHaveText(
        'zh.ipynb 的内核已响应探测。'
      );
      // The server's finding, in the language the frontend asked for.
      const findings = environment.getByRole('list', { name: '诊断结果' });
      await expect(findings.getByRole('listitem').first()).toContainText(
        '错误 PyTorch 是仅 CPU 版本，但这台机器有 GPU'
      );
      expect(
        await environment.screenshot({
          animations: 'disabled',
          // Folders and Python's patch release are this machine's: masked,
          // and the folder (and the fix, which runs the kernel's own
          // interpreter by its path) kept to one line, which a longer
          // checkout path would otherwise wrap onto more.
          style:
            '.jp-GpuMonitor-path, .jp-GpuMonitor-fix code { white-space: nowrap; overflow: hidden; }',
          mask: [
            environment.getByRole('table', { name: '环境列表' }),
            environment.locator('.jp-GpuMonitor-fix code'),
            environment
              .getByRole('definition')
              .filter({ hasText: KERNEL_ENVS }),
            environment
              .getByRole('definition')
              .filter({ hasText: /^3\.\d+\.\d+ / })
          ]
        })
      ).toMatchSnapshot('environment-panel-zh-cn.png');

      const toolbar = page.getByRole('toolbar', { name: 'main area toolbar' });
      await toolbar.getByRole('button', { name: '插入可复现单元格' }).click();
      await expect.poll(() => page.notebook.getCellCount()).toBe(2);
      const seedCell = await page.notebook.getCellTextInput(0);
      expect(seedCell).toMatch(
        /^# 可复现单元格（jupyterlab-gpu-monitor）：请最先运行。/
      );
      expect(seedCell).toContain('torch.manual_seed(SEED)');
      // Run by its command: galata's runCell waits for an English "Idle".
      await page.notebook.selectCells(0);
      await page.evaluate(() =>
        (window as any).jupyterapp.commands.execute('notebook:run-cell')
      );
      const audit = () =>
        page.notebook
          .getCellTextOutput(0)
          .then(output => (output ?? []).join(''));
      await expect
        .poll(audit, { timeout: 90000 })
        .toContain('可复现设置：随机种子 42');
      expect(await audit()).toContain('确定性算法=False');
    } finally {
      await chooseLanguage(page, 'en', 'GPU Monitor');
    }

    const gpus = await openSidePanel(page, 'GPU Monitor');
    await expect(
      gpus.getByRole('heading', { name: 'GPU Monitor', level: 2 })
    ).toBeVisible();
    await expect(
      gpus.getByRole('meter', { name: 'Memory' }).first()
    ).toBeVisible();
    const environment = await openSidePanel(page, 'Environment');
    await expect(
      environment
        .getByRole('list', { name: 'Findings' })
        .getByRole('listitem')
        .first()
    ).toContainText('PyTorch is a CPU-only build, but this machine has GPUs');
  });
});
