import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import { replaceGpus, SMI_FIXTURES } from './fakeGpu';
import { PANEL } from './gpuMonitor';

/**
 * Where the README's screenshots are: `README_SCREENSHOTS=1 jlpm playwright
 * test tests/readme.spec.ts` refreshes them (the other tests compare theirs
 * with the references kept next to them).
 */
const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

test.use({ viewport: { width: 1600, height: 1000 } });

test.describe('README screenshots', () => {
  test.skip(
    !process.env.README_SCREENSHOTS,
    'only when README_SCREENSHOTS is set'
  );

  test('the panel and the dashboard with the real 8× V100S capture, light and dark', async ({
    page,
    baseURL
  }) => {
    test.setTimeout(180000);
    await replaceGpus(page, baseURL!, {
      FAKE_SMI_XML: path.join(
        SMI_FIXTURES,
        'xml',
        'tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml'
      )
    });
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
      // The GPUs' four charts and the machine's three.
      await expect(dashboard.locator('canvas')).toHaveCount(4 + 3);
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
});
