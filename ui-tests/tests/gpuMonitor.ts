import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator, Page } from '@playwright/test';
import * as path from 'path';

import { resetFakeGpu, setFakeGpu, SMI_FIXTURES } from './fakeGpu';
import { test as baseTest } from './fixtures';

/**
 * The GPU Monitor side panel's name: its tab's tooltip and its region's label.
 */
export const PANEL = 'GPU Monitor';

/**
 * The pid of the replayed A5000 capture's one process (llama-server), on
 * both GPUs: 22430 MiB on GPU 0 and 17246 MiB on GPU 1.
 */
export const A5000_PID = '100477';

/**
 * A real Tesla T4 capture whose compute process 5762 holds 1005 MiB.
 */
export const T4_XML = path.join(
  SMI_FIXTURES,
  'xml',
  'tesla-t4-linux-driver-515.105-v11-2procs.xml'
);

/**
 * The pid of the T4 capture's compute process.
 */
export const T4_PID = '5762';

/**
 * The tests' `test` (./fixtures), for tests of the kernels on the GPUs: after
 * each test the fake nvidia-smi replays again the capture the server started
 * with.
 */
export const test = baseTest.extend<{ gpuKernels: void }>({
  gpuKernels: [
    async ({}, use) => {
      try {
        await use();
      } finally {
        resetFakeGpu();
      }
    },
    { auto: true }
  ]
});

/**
 * A kernel as `GET gpu-monitor/api/kernels` lists it.
 */
export interface IServerKernel {
  kernel_id: string;
  pid: number;
  session_path: string | null;
  memory_used_mib: number;
}

/**
 * The kernel of a notebook, once the server lists it.
 */
export async function notebookKernel(
  page: Page,
  baseURL: string,
  notebookPath: string
): Promise<IServerKernel> {
  let kernel: IServerKernel | undefined;
  await expect
    .poll(async () => {
      kernel = (await serverKernels(page, baseURL)).find(
        candidate => candidate.session_path === notebookPath
      );
      return kernel?.pid ?? null;
    })
    .not.toBeNull();
  return kernel!;
}

/**
 * Make the fake nvidia-smi report a notebook's kernel as a capture's
 * process (the A5000's by default), and wait until the server's readings
 * say that kernel holds the capture's memory.
 *
 * @returns the kernel
 */
export async function holdGpuMemory(
  page: Page,
  baseURL: string,
  notebookPath: string,
  capture: { xml?: string; pid: string; memoryMiB: number } = {
    pid: A5000_PID,
    memoryMiB: 22430 + 17246
  }
): Promise<IServerKernel> {
  const kernel = await notebookKernel(page, baseURL, notebookPath);
  setFakeGpu({
    ...(capture.xml ? { FAKE_SMI_XML: capture.xml } : {}),
    FAKE_SMI_PIDS: `${capture.pid}:${kernel.pid}`
  });
  await expect
    .poll(() => kernelMemory(page, baseURL, kernel))
    .toBe(capture.memoryMiB);
  return kernel;
}

/**
 * Replay a capture (the one the server started with by default) in which no
 * process is a notebook's kernel, and wait until the server's readings say
 * that kernel holds no GPU memory.
 */
export async function releaseGpuMemory(
  page: Page,
  baseURL: string,
  notebookPath: string,
  xml?: string
): Promise<void> {
  const kernel = await notebookKernel(page, baseURL, notebookPath);
  setFakeGpu(xml ? { FAKE_SMI_XML: xml } : {});
  await expect.poll(() => kernelMemory(page, baseURL, kernel)).toBe(0);
}

/**
 * The GPU memory a kernel holds, by the server's latest readings.
 */
async function kernelMemory(
  page: Page,
  baseURL: string,
  kernel: IServerKernel
): Promise<number | null> {
  const listed = (await serverKernels(page, baseURL)).find(
    candidate => candidate.kernel_id === kernel.kernel_id
  );
  return listed?.memory_used_mib ?? null;
}

/**
 * This server's kernels, as the server extension lists them.
 */
export async function serverKernels(
  page: Page,
  baseURL: string
): Promise<IServerKernel[]> {
  const response = await page.request.get(`${baseURL}/gpu-monitor/api/kernels`);
  return response.json();
}

/**
 * Open the GPU Monitor side panel from its tab, unless it is open; the
 * panel.
 */
export async function openPanel(
  page: IJupyterLabPageFixture
): Promise<Locator> {
  const panel = page.getByRole('region', { name: PANEL });
  if (!(await panel.isVisible())) {
    await page.getByRole('tab', { name: PANEL }).click();
  }
  await expect(panel).toBeVisible();
  return panel;
}

/**
 * A picture of the GPU Monitor panel with what moves with the clock masked:
 * the charts' lines and time axes, this machine's live readings, and how
 * many minutes of them the least used GPU is judged on.
 *
 * @param charts - the charts' accessible name, in the page's language
 * @param also - more to mask
 */
export async function panelScreenshot(
  panel: Locator,
  charts: RegExp,
  also: Locator[] = []
): Promise<Buffer> {
  return panel.screenshot({
    animations: 'disabled',
    mask: [
      panel.getByRole('img', { name: charts }),
      panel.locator('.jp-GpuMonitor-machine'),
      // A kernel's CPU and RAM, live like the machine's.
      panel.locator('.jp-GpuMonitor-kernelMachine'),
      panel.locator('.jp-GpuMonitor-freeGpuPeriod'),
      ...also
    ]
  });
}

/**
 * How long to wait for an alert while no panel or chart is open: the status
 * bar then asks only every 5 s (the `seldomInterval` setting), so an alert
 * comes with the next answer, and on a loaded machine the read and the
 * alerts' words (a chunk of their own) take seconds more.
 */
export const SELDOM_ALERT_MS = 15_000;

/**
 * The status bar text for the busiest GPU of the replayed capture: both RTX
 * A5000 idle, GPU 0 the fuller with 22437 of 24564 MiB.
 */
export const BUSIEST_STATUS = '2 GPUs · max 0 % · 21.9/24.0 GiB';

/**
 * Close a main-area tab by its close icon (which has no name that is the
 * same in every language).
 */
export async function closeMainTab(page: Page, name: string): Promise<void> {
  await page
    .getByRole('main')
    .getByRole('tab', { name })
    .locator('.lm-TabBar-tabCloseIcon')
    .click();
}

/**
 * Change settings of the GPU alerts, as the settings editor does.
 */
export async function setAlertSettings(
  page: Page,
  changes: [string, boolean | number][]
): Promise<void> {
  await page.evaluate(async changes => {
    const registry = await window.galata.getPlugin(
      '@jupyterlab/apputils-extension:settings'
    );
    for (const [key, value] of changes) {
      await registry!.set('jupyterlab-gpu-monitor:alerts', key, value);
    }
  }, changes);
}
