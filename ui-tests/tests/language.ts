import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';

/**
 * Where JupyterLab keeps the interface language: the setting its Language
 * menu writes, which the server reads too.
 */
const LANGUAGE_SETTING =
  '/lab/api/settings/@jupyterlab/translation-extension:plugin';

/**
 * What Settings > Language does: save the language, then reload.
 *
 * @param sidebarTab - a tab of the left sidebar in that language, there once
 *   JupyterLab is ready (galata's own wait looks for an English tab)
 */
export async function chooseLanguage(
  page: IJupyterLabPageFixture,
  locale: string,
  sidebarTab: string
): Promise<void> {
  const saved = await page.request.put(LANGUAGE_SETTING, {
    data: { raw: JSON.stringify({ locale }) }
  });
  expect(saved.ok()).toBe(true);
  await page.reload({ waitForIsReady: false });
  await expect(
    page.getByRole('tab', { name: sidebarTab, exact: true })
  ).toBeVisible();
}
