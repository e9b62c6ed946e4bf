import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { alertsPlugin } from './plugins/alerts';
import { cellsPlugin } from './plugins/cells';
import { dashboardPlugin } from './plugins/dashboard';
import { environmentPanelPlugin } from './plugins/environmentPanel';
import { freeGpuPlugin } from './plugins/freeGpu';
import { inspectorPlugin } from './plugins/inspector';
import { kernelActionsPlugin } from './plugins/kernelActions';
import { kernelStatusPlugin } from './plugins/kernelStatus';
import { labPlugin } from './plugins/lab';
import { modelPlugin } from './plugins/model';
import { panelPlugin } from './plugins/panel';
import { reproducibilityPlugin } from './plugins/reproducibility';
import { serverStatusPlugin } from './plugins/serverStatus';
import { statusBarPlugin } from './plugins/statusBar';

/**
 * The plugins of the GPU monitor extension.
 */
const plugins: JupyterFrontEndPlugin<any>[] = [
  modelPlugin,
  panelPlugin,
  dashboardPlugin,
  labPlugin,
  statusBarPlugin,
  kernelStatusPlugin,
  alertsPlugin,
  serverStatusPlugin,
  inspectorPlugin,
  environmentPanelPlugin,
  reproducibilityPlugin,
  kernelActionsPlugin,
  freeGpuPlugin,
  cellsPlugin
];

export default plugins;
