import { expect } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { failLike, resetFakeGpu, setFakeGpu } from './fakeGpu';
import { BUSIEST_STATUS, PANEL } from './gpuMonitor';
import { test } from './fixtures';

/**
 * How long the server's timer keeps reading after the last request that
 * wants every read (GpuMonitor.idle_seconds, its default), and a margin.
 */
const TIMER_STOPS_MS = 35_000;

test.describe('With no GPU chart shown', () => {
  test('the server reads at most 13 times a minute, and a driver failure still shows in the status bar within 5 s', async ({
    page
  }) => {
    test.setTimeout(180_000);
    await expect(
      page.getByRole('button', { name: BUSIEST_STATUS })
    ).toBeVisible();
    await expect(page.getByRole('region', { name: PANEL })).toHaveCount(0);

    // Every call of the fake nvidia-smi from now on, one line each.
    const log = path.join(
      fs.mkdtempSync(path.join(os.tmpdir(), 'seldom-')),
      'calls.log'
    );
    setFakeGpu({ FAKE_SMI_LOG: log });
    try {
      // Earlier requests that wanted every read (another test's panel, the
      // page's first answers) keep the timer going for a while.
      await page.waitForTimeout(TIMER_STOPS_MS);
      const reads = (): number =>
        fs.existsSync(log)
          ? fs
              .readFileSync(log, 'utf-8')
              .split('\n')
              .filter(line => line.startsWith('--query-gpu')).length
          : 0;
      const before = reads();
      await page.waitForTimeout(60_000);
      const inAMinute = reads() - before;
      console.log(`GPU reads in a minute with no chart shown: ${inAMinute}`);
      expect(inAMinute).toBeGreaterThan(0); // the status bar is still served
      expect(inAMinute).toBeLessThanOrEqual(13);

      failLike('driver-not-loaded-couldnt-communicate.txt', '9');
      // The status bar asks every 5 s (seldomInterval) and the server reads
      // for it: the failure shows at its next answer, a read later.
      await expect(
        page.getByRole('button', { name: '⚠ GPU error' })
      ).toBeVisible({ timeout: 6_000 });
    } finally {
      resetFakeGpu();
    }
  });
});
