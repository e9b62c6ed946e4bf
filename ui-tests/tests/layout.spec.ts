import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import * as path from 'path';

import { failLike, replaceGpus, resetFakeGpu, SMI_FIXTURES } from './fakeGpu';
import { PANEL, panelScreenshot } from './gpuMonitor';
import { cutOffTexts, inEachLook, lowContrastTexts } from './layout';
import { test } from './fixtures';

/**
 * The sidebar's default width, and a wide one.
 */
const WIDTHS = [250, 500];

/**
 * The real captures the panel is looked at with: what the fake nvidia-smi
 * replays (an XML capture, or an error and its exit status), and the GPU
 * rows it shows.
 */
const MACHINES: {
  name: string;
  replay: Record<string, string> | { error: string; exit: string } | null;
  rows: number;
}[] = [
  { name: '2x-a5000', replay: null, rows: 2 },
  {
    name: '8x-v100s',
    replay: xml('tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml'),
    rows: 8
  },
  {
    name: '8x-h100',
    replay: xml('h100-80gb-hbm3-x8-driver-580.105.08-v13.xml'),
    rows: 8
  },
  {
    name: 'gb200-lost',
    replay: xml('gb200-x2-gpu1-lost-driver-580.65-v13.xml'),
    rows: 2
  },
  {
    name: 'a100-mig',
    replay: xml('a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml'),
    rows: 1
  },
  {
    name: 'driver-not-loaded',
    replay: { error: 'driver-not-loaded-couldnt-communicate.txt', exit: '9' },
    rows: 0
  },
  {
    name: 'no-gpu',
    replay: { error: 'libnvidia-ml-so-not-found.txt', exit: '12' },
    rows: 0
  }
];

// The screen of the report: 1600 × 1000.
test.use({ viewport: { width: 1600, height: 1000 } });

test.describe('GPU monitor panel layout', () => {
  for (const machine of MACHINES) {
    test(`${machine.name}: nothing cut off or faint at ${WIDTHS.join(' and ')} px, light and dark, every GPU on the first screen`, async ({
      page,
      baseURL
    }) => {
      await replay(page, baseURL!, machine.replay);
      try {
        await page.getByRole('tab', { name: PANEL }).click();
        const panel = page.getByRole('region', { name: PANEL });
        const rows = panel.getByRole('article');
        await expect(rows).toHaveCount(machine.rows);
        if (machine.rows === 0) {
          await expect(panel.getByText(/GPU|NVIDIA/).first()).toBeVisible();
        } else {
          // The readings' history is there (charts drawn, the export on):
          // on a loaded machine it comes a moment after the rows.
          await expect(
            panel.getByRole('button', { name: 'Export CSV' })
          ).toBeEnabled();
        }
        await inEachLook(page, WIDTHS, async (theme, width) => {
          const box = (await panel.boundingBox())!;
          expect(Math.round(box.width)).toBeGreaterThanOrEqual(width - 2);
          expect(await cutOffTexts(panel)).toEqual([]);
          expect(await lowContrastTexts(panel)).toEqual([]);
          const last = machine.rows > 0 ? rows.last() : null;
          if (last) {
            const bottom = await last.evaluate(
              element => element.getBoundingClientRect().bottom
            );
            const screen = await panel.evaluate(element => ({
              bottom: element.getBoundingClientRect().bottom,
              scrolled: element.scrollTop
            }));
            expect(screen.scrolled).toBe(0);
            expect(bottom).toBeLessThanOrEqual(screen.bottom);
          }
          expect(
            // When the monitor last tried moves with the clock too.
            await panelScreenshot(panel, /of each GPU/, [
              panel.locator('.jp-GpuMonitor-retry')
            ])
          ).toMatchSnapshot(`layout-${machine.name}-${width}-${theme}.png`);
        });
      } finally {
        if (machine.replay && !('error' in machine.replay)) {
          await replaceGpus(page, baseURL!, null);
        } else {
          resetFakeGpu();
        }
      }
    });
  }
});

/**
 * An XML capture for the fake nvidia-smi to replay.
 */
function xml(capture: string): Record<string, string> {
  return { FAKE_SMI_XML: path.join(SMI_FIXTURES, 'xml', capture) };
}

/**
 * Have the fake nvidia-smi replay a machine, and wait until the server
 * reads it.
 */
async function replay(
  page: IJupyterLabPageFixture,
  baseURL: string,
  machine: (typeof MACHINES)[number]['replay']
): Promise<void> {
  if (machine === null) {
    return;
  }
  if ('error' in machine) {
    failLike(machine.error, machine.exit);
    await expect
      .poll(async () => {
        const response = await page.request.get(
          `${baseURL}/gpu-monitor/api/gpus`
        );
        return (await response.json()).error !== null;
      })
      .toBe(true);
    // A page opened after the failure: no earlier readings to keep.
    await page.reload();
    return;
  }
  await replaceGpus(page, baseURL, machine);
}
