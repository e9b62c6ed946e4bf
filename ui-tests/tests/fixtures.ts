import { test as galataTest } from '@jupyterlab/galata';

/**
 * Galata's `test`, with the extension's kernel endpoints
 * (`gpu-monitor/api/kernels`, `…/kernels/<id>/spans`) let through to the
 * server. Galata's mock of Jupyter's kernels API, which keeps the list of a
 * test's kernels, matches every URL with `/api/kernels` in it: it answered
 * the panel's poll with that list and, as the extension's answer did not
 * name the test's kernel, dropped it from the list; JupyterLab's next
 * `/api/kernels` then said the kernel was gone and JupyterLab took it for
 * dead, so that a cell run after the panel's first poll never ran (on a
 * loaded machine, where the extension lists a new kernel a read later).
 * Every test uses this one.
 */
export const test = galataTest.extend<{ passKernelRequests: void }>({
  passKernelRequests: [
    async ({ page }, use) => {
      await page.route(/\/gpu-monitor\/api\/kernels/, route =>
        route.continue()
      );
      await use();
    },
    { auto: true }
  ]
});
