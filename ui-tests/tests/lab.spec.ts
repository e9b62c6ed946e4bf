import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as readline from 'readline';

import { A5000_PID, notebookKernel, openPanel, test } from './gpuMonitor';
import { chooseLanguage } from './language';
import { cutOffTexts, inEachLook, lowContrastTexts } from './layout';
import { notebookOf, openNotebookWith } from './testKernels';

/**
 * node-1 of the lab: a JupyterLab of the test configuration, user ana's,
 * started with the lab by lab_fleet.py (see there) on the port the
 * Playwright configuration chose.
 */
const NODE1_URL = `http://localhost:${process.env.GALATA_LAB_PORT}`;

/**
 * The control file of node-1's fake nvidia-smi.
 */
const NODE1_CONTROL = path.resolve(
  __dirname,
  '..',
  '.fake-gpu-lab',
  'fake-nvidia-smi.json'
);

/**
 * The sidebar's default width, and a wide one.
 */
const WIDTHS = [250, 500];

/**
 * What the admin's lab_open_url gives for node-3 and ana.
 */
const NODE3_SPAWN = 'https://hub.lab/hub/spawn/ana/node-3';

test.use({ baseURL: NODE1_URL });
test.describe.configure({ mode: 'serial' });

let fleet: ChildProcess | null = null;

test.beforeAll(async () => {
  // Prometheus, two jupyter servers and a JupyterLab, and their first
  // scrapes.
  test.setTimeout(180000);
  fleet = spawn(
    'python',
    [
      path.resolve(__dirname, '..', 'lab_fleet.py'),
      process.env.GALATA_LAB_PORT!
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] }
  );
  await new Promise<void>((resolve, reject) => {
    readline
      .createInterface({ input: fleet!.stdout! })
      .once('line', () => resolve());
    fleet!.once('exit', code =>
      reject(new Error(`lab_fleet.py exited with ${code}`))
    );
  });
});

test.afterAll(() => {
  fleet?.kill('SIGTERM');
});

/**
 * Open a notebook whose kernel the fake nvidia-smi reports as the A5000
 * capture's process: ana's notebook holds both GPUs of node-1.
 */
async function holdNode1Gpus(
  page: IJupyterLabPageFixture,
  tmpPath: string
): Promise<void> {
  const notebookPath = await openNotebookWith(
    page,
    tmpPath,
    'train.ipynb',
    'python3',
    []
  );
  const kernel = await notebookKernel(page, NODE1_URL, notebookPath);
  fs.writeFileSync(
    NODE1_CONTROL,
    JSON.stringify({ FAKE_SMI_PIDS: `${A5000_PID}:${kernel.pid}` })
  );
}

/**
 * Check that every text of the lab's view fits and is readable.
 */
async function expectReadable(view: Locator): Promise<void> {
  expect(await cutOffTexts(view)).toEqual([]);
  expect(await lowContrastTexts(view)).toEqual([]);
}

/**
 * What a screenshot of the Lab tab masks: what moves with time (the free
 * GPU's idle time, the GPUs' idle times) and her notebook's path, in the
 * test's own folder (the digest, the notebooks' table named `notebooks`).
 */
function labTabMasks(lab: Locator, notebooks: string): Locator[] {
  return [
    lab.locator('.jp-GpuMonitor-labFree'),
    lab.locator('.jp-GpuMonitor-labGpuIdle'),
    lab.locator('.jp-GpuMonitor-labDigest'),
    lab.getByRole('table', { name: notebooks }).getByRole('rowheader')
  ];
}

test('the panel shows every machine of the lab, her notebook marked, at 250 and 500 px, light and dark', async ({
  page,
  tmpPath
}) => {
  await holdNode1Gpus(page, tmpPath);
  const panel = await openPanel(page);
  const lab = panel.getByRole('region', { name: 'Lab', exact: true });
  await expect(lab.getByText('5 of 5 machines reporting')).toBeVisible({
    timeout: 60000
  });
  const node1 = lab.getByRole('group', { name: 'node-1' });
  // Both A5000s held by her notebook, marked as hers.
  await expect(node1.locator('.jp-GpuMonitor-labGpu.jp-mod-own')).toHaveCount(
    2,
    { timeout: 30000 }
  );
  await expect(node1.getByText('(this machine)')).toBeVisible();
  // Named as she knows it: the lab's series hold only a hash of its path.
  await expect
    .poll(() =>
      node1
        .locator('.jp-GpuMonitor-labGpu.jp-mod-own')
        .first()
        .getAttribute('aria-label')
    )
    .toContain(`ana: ${tmpPath}/train.ipynb holds 21.9 GiB`);
  // Eight V100S under load, none free; eight idle H100s, all free.
  await expect(
    lab.getByRole('group', { name: 'node-2' }).getByText('0 of 8 GPUs free')
  ).toBeVisible();
  await expect(
    lab.getByRole('group', { name: 'node-3' }).getByText('8 of 8 GPUs free')
  ).toBeVisible();
  // A Kubernetes node without a server of ours, as its DCGM exporter reports
  // it.
  await expect(
    lab
      .getByRole('group', { name: 'ub20-a100-k8s' })
      .getByText('via DCGM exporter')
  ).toBeVisible();
  // No need recorded: a fifth of a card free, nobody's, the least used.
  await expect(lab.getByRole('link', { name: 'node-3 GPU 0' })).toHaveAttribute(
    'href',
    NODE3_SPAWN
  );

  await inEachLook(page, WIDTHS, async (theme, width) => {
    await lab.scrollIntoViewIfNeeded();
    await expectReadable(lab);
    expect(
      await lab.screenshot({
        animations: 'disabled',
        mask: [lab.locator('.jp-GpuMonitor-labFree')]
      })
    ).toMatchSnapshot(`lab-section-${width}-${theme}.png`);
  });
  await page.theme.setLightTheme();
});

/**
 * A notebook whose one cell recorded, on another server, needing `mib` on
 * one A100.
 */
function notebookNeeding(mib: number): object {
  const notebook = notebookOf('python3', ['train(model)']) as {
    cells: { metadata: object }[];
  };
  notebook.cells[0].metadata = {
    gpu_monitor: {
      last_run: {
        peak_memory_mib: mib,
        mean_utilization: 91.5,
        duration_seconds: 1260,
        gpu_name: 'NVIDIA A100-SXM4-80GB',
        gpu_count: 1,
        peak_memory_mib_per_gpu: [mib],
        date: '2026-11-30T10:00:00.000Z'
      }
    }
  };
  return notebook;
}

test("Free GPU anywhere follows the current notebook's recorded need", async ({
  page,
  tmpPath
}) => {
  // 30.1 GiB: more than node-1's A5000s hold and than node-2's full V100S
  // have free; node-3's idle H100s have it, and so does the A100 (35.7 GiB
  // free), whose utilisation MIG does not tell: an idle H100 goes first.
  // 90 GiB: more than any GPU of the lab has.
  const needs: [string, number][] = [
    ['fine-tune.ipynb', 30822],
    ['pretrain.ipynb', 92160]
  ];
  for (const [name, mib] of needs) {
    await page.contents.uploadContent(
      JSON.stringify(notebookNeeding(mib)),
      'text',
      `${tmpPath}/${name}`
    );
  }
  const panel = await openPanel(page);
  const free = panel
    .getByRole('region', { name: 'Lab', exact: true })
    .locator('.jp-GpuMonitor-labFree');
  await expect(free).toBeVisible({ timeout: 60000 });
  const open = async (name: string) => {
    await page.evaluate(async path => {
      await window.jupyterapp.commands.execute('docmanager:open', { path });
    }, `${tmpPath}/${name}`);
    await page.notebook.activate(name);
  };
  await open('fine-tune.ipynb');
  await expect(free).toContainText(
    'Free GPU anywhere: node-3 GPU 0: 79.6 GiB free, idle'
  );
  await expect(free).toContainText("; fits this notebook's recorded 30.1 GiB");
  await expect(
    free.getByRole('link', { name: 'node-3 GPU 0' })
  ).toHaveAttribute('href', NODE3_SPAWN);
  await open('pretrain.ipynb');
  await expect(free).toHaveText('No GPU of the lab has the room free now.');
  // Back to the first: its own need again.
  await page.notebook.activate('fine-tune.ipynb');
  await expect(free).toContainText("fits this notebook's recorded 30.1 GiB");
});

test('the GPU Lab tab names each holder, filters the machines, and shows a machine that stops as stale', async ({
  page
}) => {
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('gpu-monitor:open-lab');
  });
  const tab = page.locator('#jp-GpuMonitor-lab');
  const lab = tab.getByRole('region', { name: 'Lab', exact: true });
  await expect(lab.getByText('5 of 5 machines reporting')).toBeVisible({
    timeout: 60000
  });
  await expect(
    lab.getByRole('group', { name: 'node-2' }).getByRole('listitem')
  ).toHaveCount(8);
  // The ledger of the week: her notebook idle-held node-1's GPUs in the test
  // before (the lab's rules are evaluated every second here).
  await expect(
    lab
      .getByRole('table', { name: 'GPU-hours per user' })
      .getByRole('rowheader')
  ).toHaveText(['ana (you)'], { timeout: 30000 });
  await expect(lab.locator('.jp-GpuMonitor-labDigest')).toContainText(
    '1 notebook held'
  );
  // Her notebook of the test before, by its path (in its own folder).
  await expect(
    lab
      .getByRole('table', { name: 'GPU-hours per notebook' })
      .getByRole('rowheader')
  ).toHaveText([/^ana · .+\/train\.ipynb/]);

  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    await expectReadable(lab);
    expect(
      await tab.screenshot({
        animations: 'disabled',
        mask: labTabMasks(lab, 'GPU-hours per notebook')
      })
    ).toMatchSnapshot(`lab-tab-${theme}.png`);
  }
  await page.theme.setLightTheme();

  // Back with the layout at the next load of the page (its code loaded then),
  // saved a moment after it changes; no launcher to wait for.
  await page.waitForTimeout(1500);
  await page.reload({ waitForIsReady: false });
  await expect(lab.getByText('5 of 5 machines reporting')).toBeVisible({
    timeout: 60000
  });

  // Only the free GPUs: the idle H100s of node-3.
  await lab.getByRole('button', { name: 'Free', exact: true }).click();
  await expect(lab.locator('.jp-GpuMonitor-labNode')).toHaveCount(1);
  await expect(lab.getByRole('group', { name: 'node-3' })).toBeVisible();
  await lab.getByRole('button', { name: 'All', exact: true }).click();

  // node-3's server stops: still known, no longer reporting, greyed.
  fleet!.kill('SIGUSR1');
  await expect(lab.getByText('4 of 5 machines reporting')).toBeVisible({
    timeout: 60000
  });
  const node3 = lab.getByRole('group', { name: 'node-3' });
  await expect(node3).toHaveClass(/jp-mod-stale/);
  await expect(node3.getByText('not reporting')).toBeVisible();
  // The warnings readable too, in either theme.
  await expectReadable(lab);
  await page.theme.setDarkTheme();
  await expectReadable(lab);
  await page.theme.setLightTheme();
  // The free GPU is now elsewhere: none of the lab has a fifth of a card.
  await expect(lab.locator('.jp-GpuMonitor-labFree')).not.toContainText(
    'node-3'
  );
});

test.describe('In Simplified Chinese', () => {
  // The language is the real setting: no mocked settings here, and English
  // is put back at the end.
  test.use({ mockSettings: false });

  test('the GPU Lab tab speaks Chinese, every text whole and readable', async ({
    page
  }) => {
    test.setTimeout(180000);
    try {
      await chooseLanguage(page, 'zh_CN', 'GPU 监控');
      await page.evaluate(async () => {
        await window.jupyterapp.commands.execute('gpu-monitor:open-lab');
      });
      const tab = page.locator('#jp-GpuMonitor-lab');
      const lab = tab.getByRole('region', { name: '实验室', exact: true });
      // node-3 stopped in the test before.
      await expect(lab.getByText('5 台机器中 4 台在报告')).toBeVisible({
        timeout: 60000
      });
      await expect(
        lab
          .getByRole('group', { name: 'ub20-a100-k8s' })
          .getByText('来自 DCGM exporter')
      ).toBeVisible();
      await expectReadable(lab);
      expect(
        await tab.screenshot({
          animations: 'disabled',
          mask: [
            ...labTabMasks(lab, '每个笔记本的 GPU 小时'),
            // JupyterLab's own notifications (its news) may sit over it.
            page.locator('.Toastify__toast-container')
          ]
        })
      ).toMatchSnapshot('lab-tab-zh-cn.png');
    } finally {
      await chooseLanguage(page, 'en', 'GPU Monitor');
    }
  });
});
