import { JupyterFrontEnd } from '@jupyterlab/application';
import { WidgetTracker } from '@jupyterlab/apputils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { gpuIcon } from '../icons';
import {
  CommandIDs,
  ICellGpuRuns,
  IGpuMonitorModel,
  TRANSLATION_DOMAIN
} from '../tokens';
import { GpuDashboardPanel } from './GpuDashboardPanel';
import { showMainTab } from './mainTab';

/**
 * Adds the command that opens the GPU dashboard in the main area (the one
 * open, else a new one on the window `windowSeconds` gives), at one of its
 * charts if asked; returns the tracker of the dashboards, for the layout
 * restorer and the theme.
 */
export function addDashboardCommand(
  options: IDashboardCommandOptions
): WidgetTracker<GpuDashboardPanel> {
  const { app, model, cellRuns, translator } = options;
  const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
  const tracker = new WidgetTracker<GpuDashboardPanel>({
    namespace: 'jupyterlab-gpu-monitor-dashboard'
  });
  const create = (): GpuDashboardPanel =>
    new GpuDashboardPanel({
      model,
      cellRuns,
      windowSeconds: options.windowSeconds(),
      translator
    });

  app.commands.addCommand(CommandIDs.openDashboard, {
    label: trans.__('GPU Dashboard'),
    caption: trans.__(
      'Open the GPU Dashboard: every chart at full size, in the main area'
    ),
    icon: args => (args.isPalette ? undefined : gpuIcon),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          chart: {
            type: 'string',
            description: trans.__(
              'The chart to show: utilization, memory, temperature, power, pcie or nvlink'
            )
          }
        }
      }
    },
    execute: args => {
      const dashboard = showMainTab(app, tracker, create);
      if (typeof args.chart === 'string') {
        scrollToChart(dashboard.node, args.chart);
      }
    }
  });
  return tracker;
}

/**
 * What the dashboard command opens dashboards with.
 */
export interface IDashboardCommandOptions {
  app: JupyterFrontEnd;
  model: IGpuMonitorModel;
  cellRuns: ICellGpuRuns | null;
  translator: ITranslator | null;
  /**
   * The time window a new dashboard opens on (the panel's).
   */
  windowSeconds: () => number;
}

/**
 * Bring a chart of the dashboard into view, once it is drawn: a dashboard
 * just opened renders its charts a moment later.
 */
function scrollToChart(node: HTMLElement, chart: string): void {
  let tries = 30;
  const find = () => {
    const figure = node.querySelector(
      `figure[data-chart="${CSS.escape(chart)}"]`
    );
    if (figure) {
      figure.scrollIntoView({ block: 'start' });
    } else if (--tries > 0) {
      setTimeout(find, 100);
    }
  };
  find();
}
