import { Locator } from '@playwright/test';

/**
 * The elements under `root` whose text does not fit them (their content is
 * wider than their box: cut, or spilling over a neighbour), each as its
 * class and text. The charts' canvases are left out: uPlot sizes them.
 */
export async function cutOffTexts(root: Locator): Promise<string[]> {
  return root.evaluate(element =>
    Array.from(element.querySelectorAll<HTMLElement>('*'))
      .filter(
        each =>
          each.clientWidth > 0 &&
          each.scrollWidth > each.clientWidth + 1 &&
          !each.closest('.jp-GpuMonitor-chartCanvas')
      )
      .map(
        each =>
          `${each.className}: ${JSON.stringify((each.textContent ?? '').slice(0, 80))} (${each.scrollWidth} > ${each.clientWidth} px)`
      )
  );
}
