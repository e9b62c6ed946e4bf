import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { GpuStatusItem } from '../components/GpuStatusItem';
import { GpuModel } from '../gpu/model';
import { a5000Server, fakeServer, jsonResponse } from './server';

describe('GpuStatusItem', () => {
  let model: GpuModel;
  let item: GpuStatusItem;

  afterEach(() => {
    item.dispose();
    model.dispose();
  });

  /**
   * The item's button once rendered.
   */
  async function button(): Promise<HTMLButtonElement> {
    MessageLoop.flush();
    await item.renderPromise;
    return item.node.querySelector('button')!;
  }

  it('sums up the busiest GPU, or all of them, and opens the panel on click', async () => {
    model = new GpuModel({ serverSettings: a5000Server().settings });
    const onOpen = jest.fn();
    item = new GpuStatusItem({ model, onOpen });
    Widget.attach(item, document.body);
    expect((await button()).textContent).toBe('GPU …');

    model.watch();
    await model.refresh();
    expect((await button()).textContent).toBe('GPU 0% · 21.9/24.0 GiB');
    expect((await button()).title).toMatch(/^GPU 0, the busiest of 2/);

    item.mode = 'sum';
    expect((await button()).textContent).toBe('GPU 0% · 38.8/48.0 GiB');

    (await button()).click();
    expect(onOpen).toHaveBeenCalledTimes(1);
  });

  it('says n/a, with the reason as its tooltip, when the server fails', async () => {
    const server = fakeServer(() =>
      jsonResponse({ message: 'Not Found', reason: null }, 404)
    );
    model = new GpuModel({ serverSettings: server.settings });
    item = new GpuStatusItem({ model, onOpen: jest.fn() });
    Widget.attach(item, document.body);

    model.watch();
    await model.refresh();

    expect((await button()).textContent).toBe('GPU n/a');
    expect((await button()).title).toBe(
      'The GPU monitor server extension is not enabled on this Jupyter server.'
    );
  });
});
