import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import {
  failLike,
  replaceGpus,
  resetFakeGpu,
  setFakeGpu,
  SMI_FIXTURES,
  V100S_X8
} from './fakeGpu';
import {
  BUSIEST_STATUS,
  panelScreenshot,
  SELDOM_ALERT_MS,
  setAlertSettings
} from './gpuMonitor';
import { brokenWords, lowContrastTexts } from './layout';
import { test } from './fixtures';

/**
 * The panel's name: its tab's tooltip, its region's label and its command.
 */
const PANEL = 'GPU Monitor';

test.describe('GPU monitor panel', () => {
  test('opens from its sidebar icon with one row per GPU of the capture and their processes below', async ({
    page
  }) => {
    const panel = await openFromIcon(page);

    const rows = panel.getByRole('article');
    await expect(rows).toHaveCount(2);
    const processes = panel.getByRole('table', {
      name: 'Processes on the GPUs'
    });
    for (const [index, used] of [
      [0, '21.9'],
      [1, '16.8']
    ]) {
      const row = panel.getByRole('article', {
        name: `GPU ${index} NVIDIA RTX A5000`
      });
      await expect(row.getByRole('heading')).toHaveText(
        `GPU ${index}RTX A5000`
      );
      await expect(row.getByRole('meter', { name: 'Memory' })).toHaveAttribute(
        'aria-valuetext',
        `${used} / 24.0 GiB`
      );
      await expect(
        row.getByRole('meter', { name: 'Utilization' })
      ).toHaveAttribute('aria-valuetext', '0 %');
    }
    // The capture's llama-server, one process on both GPUs with a pid this
    // machine does not have: one row, what it holds on each on hover.
    const llama = processes.getByRole('row').nth(1);
    await expect(llama).toHaveText('0, 1not visible herepid 10047738.7 GiB');
    await expect(llama.getByRole('cell').last()).toHaveAttribute(
      'title',
      'GPU 0: 21.9 GiB · GPU 1: 16.8 GiB'
    );
    // Sorted by a column from its head, and back.
    const memory = processes.getByRole('columnheader', { name: /^Memory/ });
    await memory.getByRole('button').click();
    await expect(memory).toHaveAttribute('aria-sort', 'descending');
    await memory.getByRole('button').click();
    await expect(memory).toHaveAttribute('aria-sort', 'none');
    await expect(panel).toContainText('Driver 590.44.01 · CUDA 13.1');
  });

  test('opens from the command palette and the View menu', async ({ page }) => {
    await page.keyboard.press('Control+Shift+C');
    await page.getByRole('textbox', { name: 'SEARCH' }).fill(PANEL);
    await page.getByRole('menuitem', { name: PANEL, exact: true }).click();
    const panel = page.getByRole('region', { name: PANEL });
    await expect(panel.getByRole('article')).toHaveCount(2);

    await page.getByRole('tab', { name: PANEL }).click();
    await expect(panel).toBeHidden();
    await page.getByRole('menuitem', { name: 'View' }).click();
    await page.getByRole('menuitem', { name: PANEL, exact: true }).click();
    await expect(panel).toBeVisible();
  });

  test('draws four charts that gain readings over time', async ({ page }) => {
    const panel = await openFromIcon(page);
    // An hour: longer than the server has been sampling, so every new
    // reading is one more in the window.
    await panel.getByRole('combobox').selectOption({ label: '1 h' });

    const charts = panel.getByRole('img', { name: /of each GPU/ });
    await expect(charts).toHaveCount(4);
    await expect(charts.locator('canvas')).toHaveCount(4);
    for (const name of [
      'Utilization (%)',
      'Memory used (GiB)',
      'Temperature (°C)',
      'Power (W)'
    ]) {
      await expect(panel.getByRole('figure', { name })).toBeVisible();
    }
    const memory = panel.getByRole('figure', { name: 'Memory used (GiB)' });
    await expect(memory.getByRole('listitem')).toHaveText([
      'GPU 0 21.9 GiB',
      'GPU 1 16.8 GiB'
    ]);

    const first = await readings(charts.first());
    await expect
      .poll(() => readings(charts.first()))
      .toBeGreaterThan(first + 1);
  });

  test('stops asking for the history while hidden and catches up with since= when shown', async ({
    page
  }) => {
    const panel = await openFromIcon(page);
    await expect(panel.getByRole('img', { name: /of each GPU/ })).toHaveCount(
      4
    );
    const asked: string[] = [];
    page.on('request', request => {
      if (request.url().includes('/gpu-monitor/api/gpus/history')) {
        asked.push(request.url());
      }
    });

    await page.getByRole('tab', { name: PANEL }).click();
    await expect(panel).toBeHidden();
    const hiddenSince = asked.length;
    await page.waitForTimeout(3000);
    expect(asked).toHaveLength(hiddenSince);

    await page.getByRole('tab', { name: PANEL }).click();
    await expect.poll(() => asked.length).toBeGreaterThan(hiddenSince);
    expect(new URL(asked[hiddenSince]).searchParams.get('since')).toMatch(
      /^\d+(\.\d+)?$/
    );
  });

  test('the status bar item sums up the busiest GPU and opens the panel', async ({
    page
  }) => {
    const item = page.getByRole('button', { name: BUSIEST_STATUS });
    await expect(item).toBeVisible();

    await item.click();

    await expect(page.getByRole('region', { name: PANEL })).toBeVisible();
  });

  test('settings apply without a reload', async ({ page }) => {
    const panel = await openFromIcon(page);
    await expect(panel.getByRole('img', { name: /of each GPU/ })).toHaveCount(
      4
    );

    await page.evaluate(async () => {
      const registry = await window.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      );
      await registry!.set(
        'jupyterlab-gpu-monitor:status-bar',
        'summary',
        'sum'
      );
      await registry!.set('jupyterlab-gpu-monitor:panel', 'charts', {
        power: false
      });
    });

    await expect(
      page.getByRole('button', { name: '2 GPUs · mean 0 % · 38.8/48.0 GiB' })
    ).toBeVisible();
    await expect(panel.getByRole('img', { name: /of each GPU/ })).toHaveCount(
      3
    );
    await expect(panel.getByRole('figure', { name: 'Power (W)' })).toHaveCount(
      0
    );
  });

  test('exports the shown readings as CSV', async ({ page }) => {
    const panel = await openFromIcon(page);
    const exportButton = panel.getByRole('button', { name: 'Export CSV' });
    await expect(exportButton).toBeEnabled();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      exportButton.click()
    ]);

    expect(download.suggestedFilename()).toMatch(/^gpu-history-.*Z\.csv$/);
    const csv = fs.readFileSync((await download.path())!, 'utf-8');
    const [header, ...rows] = csv.trim().split('\r\n');
    expect(header).toBe(
      'timestamp,gpu,utilization_gpu_percent,memory_used_mib,temperature_c,power_draw_w,' +
        'pcie_received_bytes_per_second,nvlink_received_bytes_per_second,' +
        'machine_cpu_percent,machine_memory_used_mib,machine_memory_total_mib,' +
        'machine_swap_used_mib,machine_disk_read_bytes_per_second,' +
        'machine_disk_write_bytes_per_second,machine_network_received_bytes_per_second,' +
        'machine_network_sent_bytes_per_second'
    );
    // Each GPU's readings (PCIe from the XML's sample, no NVLink), then this
    // machine's own of the same moment.
    const machine = '(,[\\d.]*){8}$';
    expect(rows).toContainEqual(
      expect.stringMatching(
        new RegExp(`,0,0,22437,13,6\\.52,449536,${machine}`)
      )
    );
    expect(rows).toContainEqual(
      expect.stringMatching(
        new RegExp(`,1,0,17253,15,13\\.59,499712,${machine}`)
      )
    );
    const [, , , , , , , , cpu, , memoryTotal] =
      rows[rows.length - 1].split(',');
    expect(Number(cpu)).toBeGreaterThanOrEqual(0);
    expect(Number(memoryTotal)).toBeGreaterThan(0);
  });

  test('says calmly that a server without the NVIDIA driver has no GPU', async ({
    page,
    baseURL
  }) => {
    // A container started without the NVIDIA runtime: nvidia-smi cannot find
    // libnvidia-ml.so (the real message, exit status 12 as NVML's code).
    failLike('libnvidia-ml-so-not-found.txt', '12');
    try {
      await expect
        .poll(async () => {
          const response = await page.request.get(
            `${baseURL}/gpu-monitor/api/gpus`
          );
          return (await response.json()).error?.kind ?? null;
        })
        .toBe('not_installed');

      const panel = await openFromIcon(page);
      await expect(panel.getByRole('status')).toContainText(
        'No NVIDIA GPU found on this server'
      );
      await expect(panel.getByRole('alert')).toHaveCount(0);
      const details = panel.locator('details');
      await expect(details).not.toHaveAttribute('open', /.*/);
      await details.getByText('Details').click();
      await expect(details).toContainText(
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system."
      );
      await expect(page.getByRole('button', { name: 'No GPU' })).toBeVisible();
    } finally {
      resetFakeGpu();
    }
  });

  test("shows the server's message and hint when the driver is not loaded", async ({
    page,
    baseURL
  }) => {
    failLike('driver-not-loaded-couldnt-communicate.txt', '9');
    try {
      let error: { message: string; hint: string } | null = null;
      await expect
        .poll(async () => {
          const response = await page.request.get(
            `${baseURL}/gpu-monitor/api/gpus`
          );
          error = (await response.json()).error;
          return error;
        })
        .not.toBeNull();

      // A page opened after the driver failed: no readings to keep.
      await page.reload();
      const panel = await openFromIcon(page);

      const alert = panel.getByRole('alert');
      await expect(alert).toContainText(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
      );
      await expect(alert).toContainText(error!.hint.replace(/`/g, ''));
      await expect(alert.locator('code')).toHaveText([
        'sudo modprobe nvidia',
        'dmesg | grep -i nvidia',
        'sudo modprobe nvidia'
      ]);
      await expect(alert).toContainText(
        'No sudo here? Ask your administrator to run: sudo modprobe nvidia'
      );
      await expect(alert).toContainText(
        /Last tried at .* · retrying every 1 s/
      );
      await expect(panel.getByRole('article')).toHaveCount(0);
      await expect(
        page.getByRole('button', { name: '⚠ GPU error' })
      ).toBeVisible();
    } finally {
      resetFakeGpu();
    }
  });

  test("a GPU row takes the keyboard's focus and then shows what its tooltip tells", async ({
    page
  }) => {
    const panel = await openFromIcon(page);
    const row = panel.getByRole('article', { name: 'GPU 1 NVIDIA RTX A5000' });
    await row.focus();
    // From the keyboard, as a person tabbing through the panel does.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');

    await expect(row).toBeFocused();
    const details = row.locator('.jp-GpuMonitor-gpuDetails');
    await expect(details).toBeVisible();
    await expect(details).toContainText('P8 · SM 210 MHz');
    await expect(row).toHaveAccessibleDescription(/Bus 00000000:/);
    expect(await lowContrastTexts(details)).toEqual([]);

    await page.keyboard.press('Tab');
    await expect(details).toHaveCount(0);
  });

  test('keeps the last readings, greyed, when the driver fails mid-session, and says so once, with its mute and settings', async ({
    page
  }) => {
    const panel = await openFromIcon(page);
    await expect(panel.getByRole('article')).toHaveCount(2);

    failLike('driver-not-loaded-couldnt-communicate.txt', '9');
    try {
      await expect(panel.getByRole('alert')).toContainText(
        "couldn't communicate with the NVIDIA driver"
      );
      const lost = page.locator('.jp-Notification-Toast-error');
      await expect(lost).toContainText('The GPUs can no longer be read:');
      await expect(
        lost.getByRole('button', { name: "Don't show again" })
      ).toBeVisible();
      await expect(
        lost.getByRole('button', { name: 'Settings' })
      ).toBeVisible();
      // Its three buttons in the notification's 25em, each word whole.
      expect(await brokenWords(lost)).toEqual([]);
      expect(await lowContrastTexts(lost)).toEqual([]);
      await expect(panel.getByRole('article')).toHaveCount(2);
      await expect(panel.locator('.jp-GpuMonitor-readings')).toHaveClass(
        /jp-mod-stale/
      );
      await expect(panel).toContainText(/Last readings at /);
      await expect(panel.locator('canvas')).toHaveCount(4);
    } finally {
      resetFakeGpu();
    }
    await expect(panel.getByRole('alert')).toHaveCount(0);
    await expect(panel.locator('.jp-GpuMonitor-readings')).not.toHaveClass(
      /jp-mod-stale/
    );
    await expect(page.getByText('The GPUs can be read again.')).toBeVisible();
    const notifications = await page.evaluate(() =>
      window.galata.getNotifications()
    );
    expect(
      notifications.map(notification => [
        notification.type,
        notification.message.split(':')[0],
        notification.options.actions?.map(action => action.label)
      ])
    ).toEqual([
      [
        'success',
        'The GPUs can be read again.',
        ['Open GPU Monitor', "Don't show again", 'Settings']
      ]
    ]);
  });

  test('a GPU lost mid-session says so on its row with its reset, in one error notification and in the status bar', async ({
    page,
    baseURL
  }) => {
    const panel = await openFromIcon(page);
    await expect(panel.getByRole('article')).toHaveCount(2);
    // Two GB200 a moment later, GPU 1 lost: every reading of it in the XML
    // says "GPU is lost", and the CSV only [N/A].
    setFakeGpu({
      FAKE_SMI_XML: path.join(
        SMI_FIXTURES,
        'xml',
        'gb200-x2-gpu1-lost-driver-580.65-v13.xml'
      )
    });
    try {
      const lost = panel.getByRole('article', { name: /^GPU 1 NVIDIA GB200/ });
      await expect(lost).toContainText('GPU 1 is lost');
      await expect(lost).toContainText('sudo nvidia-smi -r');
      await expect(
        page.getByRole('button', { name: '⚠ GPU 1 lost' })
      ).toBeVisible();
      const notice = page.locator('.jp-Notification-Toast-error');
      await expect(notice).toContainText(
        'GPU 1 (0000:0B:00.0) is lost. Check dmesg, then reset it once no process uses it (sudo nvidia-smi -r -i 1), or reboot.'
      );
      await page.waitForTimeout(3000);
      const notifications = await page.evaluate(() =>
        window.galata.getNotifications()
      );
      expect(
        notifications.filter(
          notification =>
            notification.type === 'error' &&
            notification.message.includes('is lost')
        )
      ).toHaveLength(1);
    } finally {
      await replaceGpus(page, baseURL!, null);
    }
  });

  test('an alert reported before the page is reloaded is not reported again while it lasts', async ({
    page,
    baseURL
  }) => {
    // Four of the eight V100S under load (57 to 66 °C) above 60 °C.
    await replaceGpus(page, baseURL!, V100S_X8);
    await setAlertSettings(page, [
      ['onlyMyGpus', false],
      ['memoryEnabled', false],
      ['lowUtilizationEnabled', false],
      ['temperatureCelsius', 60]
    ]);
    try {
      const message = 'GPUs 0, 3, 5, 6: above the 60 °C alert threshold.';
      await expect(page.getByText(message)).toBeVisible({
        timeout: SELDOM_ALERT_MS
      });

      // JupyterLab saves its state with the workspace within a second.
      await page.waitForTimeout(2000);
      await page.reload();
      await page.waitForTimeout(5000);
      expect(
        (await page.evaluate(() => window.galata.getNotifications())).map(
          notification => notification.message
        )
      ).toEqual([]);
    } finally {
      await replaceGpus(page, baseURL!, null);
    }
  });

  test('a new alert of a kind replaces the notification of that kind, naming every GPU still in it, and closes by itself', async ({
    page,
    baseURL
  }) => {
    // The eight V100S at 57 to 66 °C: GPUs 0 and 5 above 62 °C, 3 and 6 too
    // above 60 °C.
    await replaceGpus(page, baseURL!, V100S_X8);
    const temperatureNotices = async () =>
      (await page.evaluate(() => window.galata.getNotifications()))
        .filter(notification => notification.message.includes('°C'))
        .map(notification => notification.message);
    try {
      await setAlertSettings(page, [
        ['onlyMyGpus', false],
        ['memoryEnabled', false],
        ['lowUtilizationEnabled', false],
        ['temperatureCelsius', 62]
      ]);
      await expect(
        page.getByText('GPUs 0, 5: above the 62 °C alert threshold.')
      ).toBeVisible({ timeout: SELDOM_ALERT_MS });

      await setAlertSettings(page, [['temperatureCelsius', 60]]);
      const both = page.locator('.jp-Notification-Toast-warning', {
        hasText: 'GPUs 0, 3, 5, 6: above the 60 °C alert threshold.'
      });
      await expect(both).toBeVisible({ timeout: SELDOM_ALERT_MS });
      expect(await temperatureNotices()).toEqual([
        'GPUs 0, 3, 5, 6: above the 60 °C alert threshold.'
      ]);
      expect(await brokenWords(both)).toEqual([]);

      // A warning leaves the screen by itself and stays in the
      // notification centre.
      await expect(both).toBeHidden({ timeout: 30000 });
      expect(await temperatureNotices()).toHaveLength(1);
    } finally {
      await replaceGpus(page, baseURL!, null);
    }
  });

  test('shows the instances of a MIG GPU and "MIG" for its utilization', async ({
    page,
    baseURL
  }) => {
    const mig = path.join(
      SMI_FIXTURES,
      'xml',
      'a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml'
    );
    await replaceGpus(page, baseURL!, { FAKE_SMI_XML: mig });
    try {
      const panel = await openFromIcon(page);

      const row = panel.getByRole('article', {
        name: /NVIDIA A100-SXM4-80GB/
      });
      const utilization = row.getByRole('meter', { name: 'Utilization' });
      await expect(utilization).toHaveAttribute(
        'aria-valuetext',
        'n/a under MIG'
      );
      await expect(row.locator('.jp-GpuMonitor-meterText').first()).toHaveText(
        'MIG'
      );
      const instances = row.getByRole('list', {
        name: 'MIG instances of GPU 0'
      });
      await expect(instances.getByRole('listitem')).toHaveCount(4);
      await expect(
        instances.getByRole('meter', { name: 'Memory of MIG 0' })
      ).toHaveAttribute('aria-valuetext', '12 MiB / 19.5 GiB');
    } finally {
      await replaceGpus(page, baseURL!, null);
    }
  });
});

test.describe('GPU monitor panel screenshots', () => {
  for (const theme of ['light', 'dark']) {
    test(`looks right in the ${theme} theme`, async ({ page }) => {
      if (theme === 'dark') {
        await page.theme.setDarkTheme();
      }
      const panel = await openFromIcon(page);
      await expect(panel.getByRole('img', { name: /of each GPU/ })).toHaveCount(
        4
      );
      await expect(panel.locator('canvas')).toHaveCount(4);
      // Let the layout settle.
      await page.waitForTimeout(500);

      expect(await panelScreenshot(panel, /of each GPU/)).toMatchSnapshot(
        `gpu-monitor-panel-${theme}.png`
      );
    });
  }
});

/**
 * Open the panel from its tab in the left sidebar; the panel.
 */
async function openFromIcon(page: IJupyterLabPageFixture): Promise<Locator> {
  await page.getByRole('tab', { name: PANEL }).click();
  const panel = page.getByRole('region', { name: PANEL });
  await expect(panel).toBeVisible();
  return panel;
}

/**
 * How many readings a chart shows, from its accessible name.
 */
async function readings(chart: Locator): Promise<number> {
  const name = (await chart.getAttribute('aria-label')) ?? '';
  return Number(/(\d+) readings?$/.exec(name)?.[1] ?? NaN);
}
