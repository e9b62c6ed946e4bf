import { IJupyterLabPageFixture } from '@jupyterlab/galata';
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

/**
 * The words under `root` that the browser broke across two lines ("Settin" on
 * one, "gs" on the next), each with the class of its element. Words in the
 * Latin script: Chinese text breaks between any two characters.
 */
export async function brokenWords(root: Locator): Promise<string[]> {
  return root.evaluate(element => {
    const broken: string[] = [];
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (const match of text.matchAll(/[\p{Script=Latin}\p{N}'’]+/gu)) {
        const range = document.createRange();
        range.setStart(node, match.index!);
        range.setEnd(node, match.index! + match[0].length);
        const lines = new Set(
          Array.from(range.getClientRects())
            .filter(rect => rect.width > 0)
            .map(rect => Math.round(rect.top))
        );
        if (lines.size > 1) {
          broken.push(`${node.parentElement?.className}: ${match[0]}`);
        }
      }
    }
    return broken;
  });
}

/**
 * The texts under `root` that do not reach WCAG AA against the background
 * they are drawn on (4.5:1, 3:1 for large text: 24 px, or 18.66 px bold), each
 * as its class, text and contrast. The background is what the browser paints
 * behind the text: the element's and its ancestors' background colours
 * composited, down to the first opaque one; the text's colour is faded by its
 * own alpha and its ancestors' opacity. Text of a disabled control is left
 * out, as WCAG leaves out inactive components; its reason beside it is not.
 */
export async function lowContrastTexts(root: Locator): Promise<string[]> {
  return root.evaluate(element => {
    type Rgba = [number, number, number, number];
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 1;
    const context = canvas.getContext('2d', { willReadFrequently: true })!;
    // Any CSS colour (rgb(), color-mix(), a name) as sRGB bytes and alpha.
    const rgba = (css: string): Rgba => {
      context.clearRect(0, 0, 1, 1);
      context.fillStyle = css;
      context.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = context.getImageData(0, 0, 1, 1).data;
      return [r, g, b, a / 255];
    };
    const over = (top: Rgba, below: Rgba): Rgba => {
      const alpha = top[3] + below[3] * (1 - top[3]);
      if (alpha === 0) {
        return [0, 0, 0, 0];
      }
      const mix = (i: number) =>
        (top[i] * top[3] + below[i] * below[3] * (1 - top[3])) / alpha;
      return [mix(0), mix(1), mix(2), alpha];
    };
    const luminance = ([r, g, b]: Rgba) => {
      const linear = (c: number) => {
        const s = c / 255;
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    };
    const page = rgba(getComputedStyle(document.body).backgroundColor);
    const background = (from: Element): Rgba => {
      let behind: Rgba = [0, 0, 0, 0];
      for (let at: Element | null = from; at; at = at.parentElement) {
        behind = over(behind, rgba(getComputedStyle(at).backgroundColor));
        if (behind[3] >= 0.999) {
          return behind;
        }
      }
      return over(behind, page[3] > 0 ? page : [255, 255, 255, 1]);
    };
    const opacity = (from: Element): number => {
      let product = 1;
      for (let at: Element | null = from; at; at = at.parentElement) {
        product *= Number(getComputedStyle(at).opacity);
      }
      return product;
    };
    const hasText = (each: Element) =>
      Array.from(each.childNodes).some(
        node =>
          node.nodeType === Node.TEXT_NODE && (node.textContent ?? '').trim()
      );
    return Array.from(element.querySelectorAll<HTMLElement>('*'))
      .filter(
        each =>
          hasText(each) &&
          each.getClientRects().length > 0 &&
          getComputedStyle(each).visibility !== 'hidden' &&
          !each.closest(':disabled, svg')
      )
      .flatMap(each => {
        const style = getComputedStyle(each);
        const behind = background(each);
        const ink = rgba(style.color);
        ink[3] *= opacity(each);
        const text = over(ink, behind);
        const [light, dark] = [luminance(text), luminance(behind)].sort(
          (a, b) => b - a
        );
        const ratio = (light + 0.05) / (dark + 0.05);
        const size = parseFloat(style.fontSize);
        const bold = Number(style.fontWeight) >= 700;
        const large = size >= 24 || (bold && size >= 18.66);
        const needed = large ? 3 : 4.5;
        if (ratio >= needed) {
          return [];
        }
        const css = (c: Rgba) => `rgb(${c.slice(0, 3).map(Math.round)})`;
        return [
          `${each.className || each.tagName}: ${JSON.stringify((each.textContent ?? '').trim().slice(0, 60))} ${ratio.toFixed(2)}:1 < ${needed}:1 (${css(text)} on ${css(behind)})`
        ];
      });
  });
}

/**
 * The side panel looked at as users see it: in the light theme then the
 * dark one, at each sidebar width, once the layout settled.
 */
export async function inEachLook(
  page: IJupyterLabPageFixture,
  widths: readonly number[],
  look: (theme: string, width: number) => Promise<void>
): Promise<void> {
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    for (const width of widths) {
      await page.sidebar.setWidth(width, 'left');
      await page.waitForTimeout(300);
      await look(theme, width);
    }
  }
}
