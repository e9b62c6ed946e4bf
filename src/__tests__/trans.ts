import { nullTranslator } from '@jupyterlab/translation';

import { TRANSLATION_DOMAIN } from '../tokens';

/**
 * The extension's words as the views get them with no translator: English.
 */
export const trans = nullTranslator.load(TRANSLATION_DOMAIN);
