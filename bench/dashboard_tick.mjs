// The Chromium half of bench/dashboard_tick.py, which starts the server and passes its URL and
// token: main-thread time a second of /lab without and with the GPU Dashboard on 1 hour.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
const SECONDS = 20;

const require = createRequire(join(ROOT, 'ui-tests', 'package.json'));
const { chromium } = require('playwright-core');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--disable-gpu', '--disable-background-networking', '--no-first-run']
});
try {
  const page = await browser.newPage({
    viewport: { width: 1600, height: 1000 }
  });
  await page.goto(`${url}/lab?token=${token}&reset`);
  await page.waitForFunction(
    () => globalThis.jupyterapp?.shell?.isAttached,
    null,
    {
      timeout: 120_000
    }
  );
  await page.evaluate(() => globalThis.jupyterapp.restored);
  const devtools = await page.context().newCDPSession(page);
  await devtools.send('Performance.enable');

  /** Milliseconds of main-thread tasks a second, over SECONDS. */
  async function mainThreadPerSecond() {
    const taskSeconds = async () =>
      (await devtools.send('Performance.getMetrics')).metrics.find(
        metric => metric.name === 'TaskDuration'
      ).value;
    const before = await taskSeconds();
    const started = Date.now();
    await page.waitForTimeout(SECONDS * 1000);
    const after = await taskSeconds();
    return ((after - before) * 1000) / ((Date.now() - started) / 1000);
  }

  await page.waitForTimeout(5000); // what /lab does once, settled
  const idle = await mainThreadPerSecond();

  await page.evaluate(() =>
    globalThis.jupyterapp.commands.execute('gpu-monitor:open-dashboard')
  );
  await page.waitForFunction(
    () =>
      globalThis.document.querySelectorAll('.jp-GpuMonitor-chart canvas')
        .length >= 4
  );
  const charts = await page.locator('.jp-GpuMonitor-chart canvas').count();
  /** Main-thread ms a second with the dashboard's window at `seconds`. */
  async function dashboardOver(seconds) {
    await page
      .locator('.jp-GpuMonitor-window select')
      .first()
      .selectOption(String(seconds));
    await page.waitForTimeout(3000);
    return mainThreadPerSecond();
  }
  const minute = await dashboardOver(60);
  const hour = await dashboardOver(3600);

  console.log(
    `dashboard tick in Chromium, 8 GPUs x 1 h x ${charts} charts: ` +
      `${(hour - idle).toFixed(1)} ms of main thread a second ` +
      `(${hour.toFixed(1)} ms with it open, ${idle.toFixed(1)} ms with no GPU view; ` +
      `ratio ${(hour / idle).toFixed(2)}; goal: under 16 ms); ` +
      `over 1 min instead of 1 h: ${(minute - idle).toFixed(1)} ms, ` +
      `ratio of 1 h to 1 min ${((hour - idle) / (minute - idle)).toFixed(2)}`
  );
} finally {
  await browser.close();
}
