import { expect } from '@jupyterlab/galata';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { cutOffTexts, lowContrastTexts } from './layout';
import {
  fact,
  inspection,
  KERNEL_ENVS,
  openNotebookWith,
  openPanel,
  openProbed,
  TORCH_CPU_KERNEL
} from './testKernels';
import { test } from './fixtures';

/**
 * What the server's diagnosis fixes a CPU-only torch with, next to the
 * replayed capture's driver 590.44 (CUDA 13.1): through the kernel's own
 * interpreter, torch pinned to its installed version.
 */
const CUDA_TORCH_FIX = `"${path.join(KERNEL_ENVS, 'torch-cpu', 'bin', 'python')}" -m pip install "torch==2.13.0+cu130" --index-url https://download.pytorch.org/whl/cu130`;

test.describe('Environment panel', () => {
  test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

  test("shows the test kernel's environment and a finding with its fix", async ({
    page,
    tmpPath
  }) => {
    const { panel } = await openProbed(page, tmpPath, 'torch.ipynb');
    await expect(fact(panel, 'Environment')).toHaveText('torch-cpu (venv)');
    await expect(fact(panel, 'Folder')).toHaveText(
      /\/\.kernel-envs\/torch-cpu$/
    );
    await expect(fact(panel, 'PyTorch')).toHaveText(
      '2.13.0+cpu, CPU-only build'
    );
    await expect(fact(panel, 'CUDA usable')).toHaveText('no');
    await expect(fact(panel, 'Visible GPUs')).toHaveText(
      'GPU 0 NVIDIA RTX A5000, GPU 1 NVIDIA RTX A5000 (CUDA_VISIBLE_DEVICES not set)'
    );
    await expect(fact(panel, 'Source')).toHaveText('kernel probe and server');

    const findings = panel.getByRole('list', { name: 'Findings' });
    const cpuOnly = findings.getByRole('listitem').first();
    await expect(cpuOnly).toContainText(
      'PyTorch is a CPU-only build, but this machine has GPUs'
    );
    await expect(cpuOnly.getByRole('code')).toHaveText(CUDA_TORCH_FIX);
    await cpuOnly.getByRole('button', { name: /^Copy the fix of:/ }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      CUDA_TORCH_FIX
    );
    // The new build loads only in a new kernel: said, with the restart.
    await expect(cpuOnly).toContainText(
      'Then restart the kernel: it keeps what it loaded until it restarts.'
    );
    await cpuOnly.getByRole('button', { name: 'Restart Kernel' }).click();
    const dialog = page.locator('.jp-Dialog-content');
    await expect(dialog).toContainText('Restart Kernel?');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toHaveCount(0);
    // The finding, its fix and the restart readable in both themes.
    for (const theme of ['light', 'dark']) {
      if (theme === 'dark') {
        await page.theme.setDarkTheme();
      }
      await page.waitForTimeout(300);
      expect(await lowContrastTexts(panel)).toEqual([]);
      expect(await cutOffTexts(cpuOnly)).toEqual([]);
    }
  });

  test('a deep check imports torch and asks it about CUDA', async ({
    page,
    tmpPath
  }) => {
    const { panel } = await openProbed(page, tmpPath, 'deep.ipynb');
    await expect(fact(panel, 'CUDA usable')).toHaveText('no');

    await panel.getByRole('button', { name: 'Deep Check' }).click();
    await expect(inspection(panel)).toHaveText(
      'The kernel of deep.ipynb answered a deep check (torch is imported in it).',
      { timeout: 120000 }
    );
    // torch itself answers now, and stays imported in the kernel.
    await page.notebook.setCell(
      0,
      'code',
      "import sys; 'torch' in sys.modules"
    );
    await page.notebook.runCell(0);
    expect(await page.notebook.getCellTextOutput(0)).toEqual(['True']);
  });

  test('shows what the server sees while the kernel is busy, then probes it', async ({
    page,
    tmpPath
  }) => {
    const { panel } = await openProbed(page, tmpPath, 'busy.ipynb', {
      sources: ['import time\ntime.sleep(8)']
    });

    await page.notebook.runCell(0, { wait: false });
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await expect(inspection(panel)).toHaveText(
      /^Kernel busy — showing what the server sees/
    );
    // The server reads the environment's records: torch without the kernel.
    await expect(fact(panel, 'PyTorch')).toHaveText(
      '2.13.0+cpu, CPU-only build'
    );
    await expect(fact(panel, 'Source')).toHaveText(
      "server (the kernel's process)"
    );

    await expect(inspection(panel)).toHaveText(
      'The kernel of busy.ipynb answered the probe.',
      { timeout: 30000 }
    );
    // The probe left no trace in the notebook: the cell counts as the first.
    await expect.poll(() => page.notebook.getCellTextOutput(0)).toEqual(null);
    await expect(page.locator('.jp-InputArea-prompt').first()).toHaveText(
      '[1]:'
    );
  });

  test('lists the environments, their packages, and downloads environment.yml', async ({
    page,
    tmpPath
  }) => {
    await openNotebookWith(page, tmpPath, 'envs.ipynb', TORCH_CPU_KERNEL);
    const panel = await openPanel(page);
    const table = panel.getByRole('table', { name: 'Environments' });
    await expect(
      table.getByRole('button', { name: 'torch-cpu', exact: true })
    ).toBeVisible();

    await panel
      .getByRole('searchbox', { name: 'Search environments' })
      .fill('torch');
    await expect(table.getByRole('button', { expanded: false })).toHaveCount(1);

    await table.getByRole('button', { name: 'torch-cpu', exact: true }).click();
    const packages = panel.getByRole('table', {
      name: 'Packages of torch-cpu'
    });
    await expect(
      packages.getByRole('row').filter({ hasText: /^torch2/ })
    ).toHaveText('torch2.13.0+cpupip');

    const download = page.waitForEvent('download');
    await table
      .getByRole('button', { name: 'Download environment.yml of torch-cpu' })
      .click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('environment.yml');
    const yaml = fs.readFileSync(await file.path(), 'utf-8');
    expect(yaml).toContain('name: torch-cpu\n');
    expect(yaml).toContain('      - torch==2.13.0+cpu\n');
  });

  test('an environment deleted while the list is open goes from it, without a dialog', async ({
    page,
    tmpPath
  }) => {
    // A venv and its kernelspec, beside the test kernels' (JUPYTER_PATH).
    const kernels = path.resolve(__dirname, '..', '.kernels');
    const prefix = path.join(kernels, 'gone-env');
    const spec = path.join(kernels, 'jupyter', 'kernels', 'gpu-monitor-gone');
    execFileSync(path.join(KERNEL_ENVS, 'plain', 'bin', 'python'), [
      '-m',
      'venv',
      '--without-pip',
      prefix
    ]);
    fs.mkdirSync(spec, { recursive: true });
    fs.writeFileSync(
      path.join(spec, 'kernel.json'),
      JSON.stringify({
        argv: [path.join(prefix, 'bin', 'python'), '-m', 'ipykernel_launcher'],
        display_name: 'gone',
        language: 'python'
      })
    );
    try {
      await openNotebookWith(page, tmpPath, 'gone.ipynb', TORCH_CPU_KERNEL);
      const panel = await openPanel(page);
      await panel.getByRole('button', { name: 'Refresh' }).click();
      const table = panel.getByRole('table', { name: 'Environments' });
      const row = table.getByRole('button', { name: 'gone-env', exact: true });
      await expect(row).toBeVisible();

      fs.rmSync(prefix, { recursive: true, force: true });
      await row.click();

      // Its row says so and the list is read again, without it; no dialog
      // in the REST API's words, no row left "Reading the packages…".
      await expect(row).toHaveCount(0);
      await expect(page.locator('.jp-Dialog')).toHaveCount(0);
      await expect(table).not.toContainText('Reading the packages');
    } finally {
      fs.rmSync(spec, { recursive: true, force: true });
      fs.rmSync(prefix, { recursive: true, force: true });
    }
  });

  test('a bash kernel gets no Python fix and no Deep Check to run', async ({
    page,
    tmpPath
  }) => {
    await openNotebookWith(page, tmpPath, 'shell.ipynb', 'gpu-monitor-bash');
    const panel = await openPanel(page);

    await expect(inspection(panel)).toHaveText(
      "This kernel's language has no in-kernel probe; showing what the server sees."
    );
    await expect(fact(panel, 'CUDA usable')).toHaveText(
      'not asked: not a Python kernel'
    );
    await expect(
      panel.getByRole('button', { name: 'Deep Check' })
    ).toBeDisabled();
    await expect(panel).not.toContainText('ipykernel');
    await expect(panel).not.toContainText(/Deep check\)/);
    const findings = panel.getByRole('list', { name: 'Findings' });
    await expect(findings.getByRole('code')).toHaveCount(0);
    for (const theme of ['light', 'dark']) {
      if (theme === 'dark') {
        await page.theme.setDarkTheme();
      }
      await page.waitForTimeout(300);
      expect(await lowContrastTexts(panel)).toEqual([]);
    }
  });
});
