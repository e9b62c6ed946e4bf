import { Notification } from '@jupyterlab/apputils';
import { StateDB } from '@jupyterlab/statedb';
import { ServerConnection } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';

import { DEFAULT_ALERT_THRESHOLDS } from '../alerts/alerts';
import { AlertNotifier, FIRING_STATE } from '../alerts/alertNotifier';
import { GpuModel } from '../gpu/model';
import { IGpuSnapshot } from '../restapi/gpus';
import { a5000Snapshot, driverNotLoadedSnapshot } from './payloads';
import { endpoint, fakeServer } from './server';
import { trans } from './trans';

/**
 * The defaults, about every GPU (the capture's processes are no kernel of
 * this server).
 */
const EVERY_GPU = { ...DEFAULT_ALERT_THRESHOLDS, onlyMyGpus: false };

/**
 * The capture with GPU 1 at 88 °C, read at `timestamp`.
 */
function hotAt(timestamp: number): IGpuSnapshot {
  const snapshot = a5000Snapshot();
  snapshot.timestamp = timestamp;
  snapshot.gpus[1].temperature_c = 88;
  return snapshot;
}

/**
 * A server that answers `GET gpus` with each of `snapshots` in turn, then the
 * last one again.
 */
function serverOf(...snapshots: IGpuSnapshot[]) {
  return fakeServer(request =>
    endpoint(request) === 'gpus'
      ? snapshots.length > 1
        ? snapshots.shift()
        : snapshots[0]
      : { timestamps: [], gpus: [], machine: null }
  );
}

/**
 * Until the notifier's promises (the state, the words of the alerts) settle.
 */
async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

function shown(): string[] {
  return Notification.manager.notifications.map(({ message }) => message);
}

describe('AlertNotifier', () => {
  const disposables: { dispose(): void }[] = [];

  afterEach(() => {
    disposables.splice(0).forEach(item => item.dispose());
    Notification.dismiss();
  });

  function notifier(
    model: GpuModel,
    state: StateDB | null = null
  ): AlertNotifier {
    const made = new AlertNotifier({
      model,
      commands: new CommandRegistry(),
      serverSettings: ServerConnection.makeSettings(),
      trans,
      state
    });
    disposables.push(made);
    return made;
  }

  function modelOf(server: ReturnType<typeof serverOf>): GpuModel {
    const model = new GpuModel({ serverSettings: server.settings });
    disposables.push(model);
    return model;
  }

  it('says once that the GPUs can no longer be read, and that they can again', async () => {
    const server = serverOf(
      a5000Snapshot(),
      driverNotLoadedSnapshot(),
      driverNotLoadedSnapshot(),
      a5000Snapshot()
    );
    const model = modelOf(server);
    notifier(model).configure(EVERY_GPU); // watching: the first read
    await settled();
    expect(shown()).toEqual([]);

    await model.refresh();
    await model.refresh(); // still failing: no second notification
    const lost = shown();
    await model.refresh();

    expect(lost).toEqual([
      expect.stringMatching(/^The GPUs can no longer be read: /)
    ]);
    // The error is gone, a word that they are back in its place.
    expect(shown()).toEqual(['The GPUs can be read again.']);
  });

  it('raises a temperature alert once per episode, and not again after a reload of the page', async () => {
    const state = new StateDB();
    const model = modelOf(serverOf(hotAt(1), hotAt(2)));
    notifier(model, state).configure(EVERY_GPU);
    await settled();

    await model.refresh();
    await settled();
    await model.refresh();
    await settled();

    expect(shown()).toEqual([expect.stringMatching(/^GPU 1.*88 °C/)]);
    expect(await state.fetch(FIRING_STATE)).toEqual([
      expect.stringContaining('temperature')
    ]);

    // The page loads again while GPU 1 is still hot: no second notification.
    Notification.dismiss();
    const reloaded = modelOf(serverOf(hotAt(3)));
    notifier(reloaded, state).configure(EVERY_GPU);
    await settled();
    await reloaded.refresh();
    await settled();

    expect(shown()).toEqual([]);
  });

  it('reads nothing while every alert is off', async () => {
    const server = serverOf(hotAt(1));
    const model = modelOf(server);
    notifier(model).configure({
      ...EVERY_GPU,
      memoryEnabled: false,
      temperatureEnabled: false,
      slowdownEnabled: false,
      lowUtilizationEnabled: false,
      readFailureEnabled: false
    });
    await settled();

    await model.refresh();

    expect(server.requests).toHaveLength(0);
    expect(shown()).toEqual([]);
  });
});
