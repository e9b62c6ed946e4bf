import { nullTranslator } from '@jupyterlab/translation';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { GpuMonitorPanel } from '../components/GpuMonitorPanel';
import { GpuModel } from '../gpu/model';
import { IGpuMonitorModel } from '../tokens';
import { fakeActions } from './panelActions';
import { a5000Server } from './server';

jest.mock('uplot', () => jest.requireActual('./fakeUPlot'));

describe('GpuMonitorPanel', () => {
  let model: GpuModel;
  let panel: GpuMonitorPanel;
  let watches: IGpuMonitorModel.IWatchOptions[];
  let watching: number;

  beforeEach(() => {
    model = new GpuModel({ serverSettings: a5000Server().settings });
    watches = [];
    watching = 0;
    const watch = model.watch.bind(model);
    jest.spyOn(model, 'watch').mockImplementation(options => {
      watches.push(options ?? {});
      watching++;
      const watcher = watch(options);
      return {
        get isDisposed() {
          return watcher.isDisposed;
        },
        dispose: () => {
          watching--;
          watcher.dispose();
        }
      };
    });
    panel = new GpuMonitorPanel({
      model,
      actions: fakeActions(),
      translator: nullTranslator
    });
  });

  afterEach(() => {
    panel.dispose();
    model.dispose();
  });

  it('is a labelled region with a stable id and an icon', () => {
    expect(panel.id).toBe('jp-GpuMonitor-panel');
    expect(panel.node.getAttribute('role')).toBe('region');
    expect(panel.node.getAttribute('aria-label')).toBe('GPU Monitor');
    expect(panel.title.caption).toBe('GPU Monitor');
    expect(panel.title.icon).toBeDefined();
  });

  it('asks for the history and the kernels only while shown, and renders nothing before', async () => {
    panel.hide();
    Widget.attach(panel, document.body);
    MessageLoop.flush();
    expect(watches).toEqual([]);
    expect(panel.node.textContent).toBe('');

    panel.show();
    expect(watches).toEqual([{ history: true, kernels: true }]);
    expect(watching).toBe(1);

    panel.hide();
    expect(watching).toBe(0);

    panel.show();
    expect(watching).toBe(1);
    panel.dispose();
    expect(watching).toBe(0);
  });

  it('keeps the window it is given and tells who listens', () => {
    const changed = jest.fn();
    panel.windowChanged.connect((_, seconds) => changed(seconds));

    panel.windowSeconds = 900;
    panel.windowSeconds = 900;

    expect(panel.windowSeconds).toBe(900);
    expect(changed).toHaveBeenCalledTimes(1);
    expect(changed).toHaveBeenCalledWith(900);
  });
});
