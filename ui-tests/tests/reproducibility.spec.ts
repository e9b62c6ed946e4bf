import { expect, galata, IJupyterLabPageFixture } from '@jupyterlab/galata';

import { openNotebookWith, TORCH_CPU_KERNEL } from './testKernels';
import { test } from './fixtures';

/**
 * The toolbar button's name: its command's caption.
 */
const INSERT = /^Insert a reproducibility cell at the top/;

/**
 * A cell that draws from every generator the seed cell seeds (numpy's global
 * one and `rng`, torch on the CPU and its DataLoader generator, random), and
 * multiplies matrices, which strict mode makes deterministic.
 */
const DRAWS = [
  'print(np.random.rand(3), rng.random(3), random.random())',
  'print(torch.rand(3), torch.randperm(8, generator=data_generator))',
  'print((torch.randn(64, 64) @ torch.randn(64, 64)).sum().item())'
].join('\n');

test.describe('Reproducibility cell', () => {
  test('inserting it twice from the toolbar leaves one cell, at the top', async ({
    page,
    tmpPath
  }) => {
    await openNotebookWith(page, tmpPath, 'twice.ipynb', TORCH_CPU_KERNEL, [
      'x = 1',
      'y = 2'
    ]);
    const toolbar = page.getByRole('toolbar', { name: 'main area toolbar' });
    await toolbar.getByRole('button', { name: INSERT }).click();
    await expect.poll(() => page.notebook.getCellCount()).toBe(3);
    const source = await page.notebook.getCellTextInput(0);
    // The kernel has numpy and torch: both are seeded, nothing else is.
    expect(source).toContain('np.random.seed(SEED)');
    expect(source).toContain('torch.manual_seed(SEED)');
    expect(source).not.toContain('import tensorflow');
    expect(source).not.toContain('use_deterministic_algorithms');

    await page.notebook.selectCells(2);
    await toolbar.getByRole('button', { name: INSERT }).click();
    await expect.poll(() => page.notebook.getCellCount()).toBe(3);
    expect(await page.notebook.getCellTextInput(0)).toBe(source);
    expect(await page.notebook.getCellTextInput(1)).toBe('x = 1');
  });

  for (const strict of [false, true]) {
    test.describe(strict ? 'in strict mode' : 'by default', () => {
      test.use({
        mockSettings: {
          ...galata.DEFAULT_SETTINGS,
          'jupyterlab-gpu-monitor:reproducibility': { strict }
        },
        // Galata's list of the test's kernels, which it answers /api/kernels
        // with, learns of the kernel a kernel change starts only once the
        // change's answer is back: a list asked meanwhile left it out, and
        // JupyterLab dropped its new connection as that of a kernel gone. The
        // kernels go with the notebook's session, which Galata still ends.
        kernels: null
      });

      test('numpy and torch draw the same numbers in two fresh kernels', async ({
        page,
        tmpPath
      }) => {
        // Two kernels start and import torch: a minute on a loaded machine.
        test.setTimeout(120_000);
        await openNotebookWith(page, tmpPath, 'draws.ipynb', TORCH_CPU_KERNEL, [
          DRAWS
        ]);
        await page.evaluate(() =>
          window.jupyterapp.commands.execute(
            'gpu-monitor:insert-reproducibility-cell'
          )
        );
        await expect.poll(() => page.notebook.getCellCount()).toBe(2);

        const first = await runAll(page);
        // A new kernel, not a restart: JupyterLab 4.6's restart now and then
        // leaves the kernel's socket closed (its restart request reports
        // "Invalid response: 201 Created" in the console), and the test is
        // about the draws of a fresh process.
        await page.evaluate(async name => {
          const panel = (window as any).jupyterapp.shell.currentWidget;
          await panel.sessionContext.changeKernel({ name });
        }, TORCH_CPU_KERNEL);
        // Between the seed and the draws, a frontend asks the kernel for its
        // info, as a reconnect or a console opened on the kernel does.
        await page.notebook.runCell(0);
        await page.evaluate(async () => {
          const panel = (window as any).jupyterapp.shell.currentWidget;
          await panel.sessionContext.session.kernel.requestKernelInfo();
        });
        await page.notebook.runCell(1);
        const second = await drawsPrinted(page);

        // Numbers, not a traceback, and the same ones.
        expect(first).toMatch(
          /^\[[-\d. e]+\] \[[-\d. e]+\] [\d.]+\ntensor\(\[/
        );
        expect(second).toEqual(first);
        const audit = (await page.notebook.getCellTextOutput(0))!.join('');
        expect(audit).toContain(
          strict
            ? 'Reproducibility: seed 42 (strict)'
            : 'Reproducibility: seed 42'
        );
        expect(audit).toContain(
          `deterministic algorithms=${strict ? 'True' : 'False'}`
        );
        expect(audit).not.toContain('WARNING');
      });
    });
  }
});

/**
 * Run every cell; the draws the second one printed.
 */
async function runAll(page: IJupyterLabPageFixture): Promise<string> {
  await page.notebook.run();
  return drawsPrinted(page);
}

/**
 * The draws the second cell printed.
 */
async function drawsPrinted(page: IJupyterLabPageFixture): Promise<string> {
  const output = await page.notebook.getCellTextOutput(1);
  expect(output).not.toBeNull();
  return output!.join('');
}
