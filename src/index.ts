import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { serverStatusPlugin } from './plugins/serverStatus';

/**
 * The plugins of the GPU monitor extension.
 */
const plugins: JupyterFrontEndPlugin<any>[] = [serverStatusPlugin];

export default plugins;
