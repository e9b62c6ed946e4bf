import { JupyterFrontEnd } from '@jupyterlab/application';
import { WidgetTracker } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

/**
 * Show the tab a tracker has open, or a new one that `create` makes (added
 * to the tracker, for the layout restorer, and to the main area); the tab
 * shown. One such tab at a time: the GPU Dashboard, the GPU Lab.
 */
export function showMainTab<T extends Widget>(
  app: JupyterFrontEnd,
  tracker: WidgetTracker<T>,
  create: () => T
): T {
  const open = tracker.currentWidget;
  let tab: T;
  if (open && !open.isDisposed) {
    tab = open;
  } else {
    tab = create();
    void tracker.add(tab);
    app.shell.add(tab, 'main');
  }
  app.shell.activateById(tab.id);
  return tab;
}
