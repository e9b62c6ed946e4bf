import { GpuModel } from '../gpu/model';
import { a5000Server } from './server';

/**
 * Make the browser tab hidden or visible, as the browser tells the page.
 */
function setTabHidden(hidden: boolean): void {
  Object.defineProperty(document, 'visibilityState', {
    configurable: true,
    get: () => (hidden ? 'hidden' : 'visible')
  });
  document.dispatchEvent(new Event('visibilitychange'));
}

describe('GpuModel in a browser tab', () => {
  afterEach(() => {
    setTabHidden(false);
  });

  it('stops asking the server while the tab is hidden, and asks again when it is back', async () => {
    const server = a5000Server();
    const model = new GpuModel({ serverSettings: server.settings });
    model.watch({ history: true });
    await model.refresh();

    setTabHidden(true);
    // Lumino's poll lingers one tick before it stands by.
    await model.refresh();
    const asked = server.requests.length;
    await model.refresh();
    await model.refresh();
    expect(server.requests).toHaveLength(asked);

    setTabHidden(false);
    await model.refresh();
    expect(server.requests.length).toBeGreaterThan(asked);
    model.dispose();
  });
});
