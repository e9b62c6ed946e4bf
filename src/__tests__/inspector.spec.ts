import { ISessionContext } from '@jupyterlab/apputils';
import { NotebookModel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage, ServerConnection } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';

import { makeFingerprint } from '../env/fingerprint';
import { writeFingerprint } from '../env/fingerprintRecord';
import { EnvironmentInspector } from '../env/inspector';
import { IGpuMonitorModel, IKernelGpus } from '../tokens';
import { IFinding } from '../restapi/inspector';
import {
  diagnoses,
  environmentList,
  ExecuteReply,
  probeOf,
  probeReplies,
  torchCpuPackages
} from './envPayloads';
import { a5000Snapshot } from './payloads';
import { endpoint, fakeServer, HUB_BASE_URL, requestedUrl } from './server';

/**
 * A kernel whose execute requests are answered with the next of `replies`
 * (never, when none is left).
 */
class FakeKernel {
  constructor(
    readonly id: string,
    language = 'python'
  ) {
    this.spec = Promise.resolve({ language });
  }

  status: Kernel.Status = 'idle';
  readonly spec: Promise<{ language: string }>;
  readonly replies: ExecuteReply[] = [];
  readonly requests: KernelMessage.IExecuteRequestMsg['content'][] = [];

  requestExecute(content: KernelMessage.IExecuteRequestMsg['content']) {
    this.requests.push(content);
    const reply = this.replies.shift();
    return {
      isDisposed: false,
      done: reply
        ? Promise.resolve({ content: reply })
        : new Promise(() => undefined),
      dispose() {
        this.isDisposed = true;
      }
    };
  }
}

/**
 * A session whose kernel and status a test changes.
 */
class FakeSession {
  constructor(kernel: FakeKernel | null) {
    this.session = { kernel };
  }

  session: { kernel: FakeKernel | null };
  kernelChanged = new Signal<this, unknown>(this);
  statusChanged = new Signal<this, Kernel.Status>(this);

  setKernel(kernel: FakeKernel | null): void {
    this.session = { kernel };
    this.kernelChanged.emit({});
  }

  setStatus(status: Kernel.Status): void {
    this.session.kernel!.status = status;
    this.statusChanged.emit(status);
  }
}

/**
 * A GPU model holding the recorded A5000 snapshot.
 */
function fakeGpuModel(): IGpuMonitorModel {
  const model = {
    snapshot: a5000Snapshot(),
    kernelGpus: null as IKernelGpus | null,
    changed: new Signal<unknown, void>({}),
    watch: () => ({ dispose: () => undefined, isDisposed: false }),
    refresh: () => Promise.resolve(),
    read: () => Promise.resolve()
  };
  return model as unknown as IGpuMonitorModel;
}

/**
 * Wait until a condition holds.
 */
async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 500) {
      throw new Error('timed out waiting');
    }
    await new Promise(resolve => setTimeout(resolve, 2));
  }
}

describe('EnvironmentInspector', () => {
  let server: ReturnType<typeof fakeServer>;
  let diagnoseBodies: any[];
  let gpuModel: IGpuMonitorModel;
  let inspector: EnvironmentInspector;
  let kernel: FakeKernel;
  let session: FakeSession;
  let notebook: NotebookModel;

  beforeEach(() => {
    diagnoseBodies = [];
    server = fakeServer(async request => {
      switch (endpoint(request)) {
        case 'diagnose': {
          const body = await request.clone().json();
          diagnoseBodies.push(body);
          const report = body.probe
            ? diagnoses.torchCpuProbe()
            : diagnoses.torchCpuServer();
          return { ...report, kernel_id: body.kernel_id };
        }
        case 'probe':
          return {
            expression: 'PROBE',
            deep: requestedUrl(request).searchParams.get('deep') === '1'
          };
        case 'envs':
          return environmentList();
        case 'envs/torch-cpu':
          return torchCpuPackages();
      }
      throw new Error(`unexpected request ${request.url}`);
    });
    gpuModel = fakeGpuModel();
    inspector = new EnvironmentInspector({
      serverSettings: server.settings,
      gpuModel,
      translator: nullTranslator
    });
    kernel = new FakeKernel('kernel-1');
    kernel.replies.push(probeReplies.torchCpu());
    session = new FakeSession(kernel);
    notebook = new NotebookModel();
  });

  afterEach(() => {
    inspector.dispose();
    notebook.dispose();
  });

  const target = () => ({
    label: 'train.ipynb',
    sessionContext: session as unknown as ISessionContext,
    notebook
  });

  it('asks nothing while nobody watches and the notebook has no fingerprint', async () => {
    inspector.setTarget(target());
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(server.requests).toEqual([]);
    expect(kernel.requests).toEqual([]);
  });

  it('asks the server, then probes the idle kernel once watched', async () => {
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'probed');

    expect(server.requests.map(endpoint)).toEqual([
      'diagnose',
      'envs',
      'envs/torch-cpu',
      'probe',
      'diagnose'
    ]);
    expect(diagnoseBodies.map(body => body.probe === null)).toEqual([
      true,
      false
    ]);
    expect(kernel.requests).toHaveLength(1);
    expect(kernel.requests[0]).toMatchObject({
      silent: true,
      store_history: false,
      user_expressions: { gpu_monitor_probe: 'PROBE' }
    });
    expect(inspector.probe?.packages['torch']).toBe('2.13.0+cpu');
    expect(inspector.report?.sources).toEqual({ server: true, probe: true });
    expect(inspector.environment?.id).toBe('torch-cpu');
    expect(inspector.findings.map(f => f.id)).toEqual(['cpu-only-torch']);
    // No CUDA_VISIBLE_DEVICES: the kernel can use both GPUs.
    expect(inspector.kernelGpus).toEqual({
      label: 'train.ipynb',
      indices: [0, 1]
    });
  });

  it('shows what the server sees while the kernel is busy, and probes once it is idle', async () => {
    kernel.status = 'busy';
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'waiting');

    expect(inspector.report?.sources).toEqual({ server: true, probe: false });
    expect(inspector.serverPackages).toMatchObject({
      torch: '2.13.0+cpu',
      numpy: '2.4.6'
    });
    expect(kernel.requests).toEqual([]);

    session.setStatus('idle');
    await until(() => inspector.phase === 'probed');
    expect(kernel.requests).toHaveLength(1);
  });

  it('tells the GPUs the kernel started with while it is busy', async () => {
    const report = diagnoses.torchCpuVisibleDevices();
    server = fakeServer(() => ({
      ...report,
      sources: { server: true, probe: false }
    }));
    inspector.dispose();
    inspector = new EnvironmentInspector({
      serverSettings: server.settings,
      gpuModel
    });
    kernel.status = 'busy';
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'waiting');
    expect(report.process?.variables['CUDA_VISIBLE_DEVICES']).toBe('1,7');
    expect(inspector.kernelGpus?.indices).toEqual([1]);
  });

  it('does not probe a kernel of another language', async () => {
    session.setKernel(new FakeKernel('kernel-r', 'R'));
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'no-probe');
    expect(inspector.report).not.toBeNull();
    expect(inspector.error).toBeNull();
  });

  it('gives up on a probe the kernel does not answer in time', async () => {
    kernel.replies.length = 0;
    inspector.probeTimeoutSeconds = 0.05;
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'timeout');
    expect(inspector.error).toBe(
      'The kernel did not answer the probe within 0.05 s.'
    );
    expect(inspector.report?.sources.probe).toBe(false);
  });

  it('tells why the server could not inspect the kernel', async () => {
    inspector.dispose();
    server = fakeServer(
      () =>
        new Response(
          JSON.stringify({ message: 'no such kernel on this server' }),
          {
            status: 404
          }
        )
    );
    inspector = new EnvironmentInspector({ serverSettings: server.settings });
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'failed');
    expect(inspector.error).toBe(
      'The server could not inspect the kernel: no such kernel on this server'
    );
    expect(kernel.requests).toEqual([]);
  });

  it('probes again after a restart and when the kernel changes', async () => {
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'probed');

    session.setStatus('restarting');
    expect(inspector.phase).toBe('waiting');
    expect(inspector.probe).toBeNull();
    kernel.replies.push(probeReplies.torchCpu());
    session.setStatus('idle');
    await until(() => inspector.phase === 'probed');
    expect(kernel.requests).toHaveLength(2);

    const other = new FakeKernel('kernel-2');
    other.replies.push(probeReplies.plain());
    session.setKernel(other);
    await until(() => inspector.probe?.packages['numpy'] === null);
    expect(other.requests).toHaveLength(1);
    expect(diagnoseBodies[diagnoseBodies.length - 1].kernel_id).toBe(
      'kernel-2'
    );
  });

  it("shows the new kernel's answer, never the late one for the kernel it left", async () => {
    let answerFirstKernel!: () => void;
    const firstKernelAnswers = new Promise<void>(resolve => {
      answerFirstKernel = resolve;
    });
    // The server answers for kernel-1 only once the test says so.
    const slowSettings = ServerConnection.makeSettings({
      baseUrl: HUB_BASE_URL,
      fetch: async (input: RequestInfo | URL) => {
        const request = input as Request;
        if ((await request.clone().text()).includes('"kernel-1"')) {
          await firstKernelAnswers;
        }
        return server.settings.fetch(request);
      }
    });
    inspector.dispose();
    inspector = new EnvironmentInspector({
      serverSettings: slowSettings,
      gpuModel,
      translator: nullTranslator
    });
    inspector.setTarget(target());
    inspector.watch();
    expect(inspector.phase).toBe('server');

    const other = new FakeKernel('kernel-2');
    other.replies.push(probeReplies.plain());
    session.setKernel(other);
    await until(() => inspector.phase === 'probed');
    answerFirstKernel();
    await until(() =>
      diagnoseBodies.some(body => body.kernel_id === 'kernel-1')
    );
    await new Promise(resolve => setTimeout(resolve, 20));

    expect(inspector.phase).toBe('probed');
    expect(inspector.report?.kernel_id).toBe('kernel-2');
    expect(inspector.probe?.packages['numpy']).toBeNull();
    expect(kernel.requests).toEqual([]);
  });

  it('ignores the busy and idle of its own probe and of other requests', async () => {
    inspector.setTarget(target());
    inspector.watch();
    await until(() => inspector.phase === 'probed');
    session.setStatus('busy');
    session.setStatus('idle');
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(kernel.requests).toHaveLength(1);
  });

  it('imports torch for a deep check', async () => {
    inspector.setTarget(target());
    kernel.replies.splice(0, 1, probeReplies.torchCpuDeep());
    await inspector.refresh({ deep: true });
    expect(inspector.deep).toBe(true);
    expect(inspector.probe?.torch?.cuda_available).toBe(false);
    const probeRequest = server.requests.find(r => endpoint(r) === 'probe')!;
    expect(requestedUrl(probeRequest).searchParams.get('deep')).toBe('1');
  });

  describe('with a fingerprint', () => {
    /**
     * Record the recorded torch-cpu kernel, with numpy 2.3.5 instead.
     */
    function recordOlderNumpy(): void {
      const probe = probeOf(probeReplies.torchCpu());
      probe.packages['numpy'] = '2.3.5';
      writeFingerprint(
        notebook,
        makeFingerprint({
          probe,
          environment: null,
          snapshot: a5000Snapshot(),
          torchCuda: 'cpu',
          now: new Date('2026-11-01T00:00:00Z')
        })
      );
    }

    it('checks each kernel start for drift, even unwatched, and tells it once', async () => {
      recordOlderNumpy();
      const found = jest.fn();
      inspector.driftFound.connect((_, drift) => found(drift.map(f => f.id)));
      inspector.setTarget(target());
      await until(() => inspector.phase === 'probed');

      expect(inspector.fingerprint?.packages['numpy']).toBe('2.3.5');
      expect(inspector.drift.map(f => f.title)).toEqual([
        'numpy 2.3.5 → 2.4.6 since the fingerprint'
      ]);
      expect(inspector.findings.map(f => f.id)).toEqual([
        'cpu-only-torch',
        'drift-package-numpy'
      ]);
      expect(diagnoseBodies[0].expected_prefix).toBe(
        probeOf(probeReplies.torchCpu()).prefix
      );
      expect(found.mock.calls).toEqual([[['drift-package-numpy']]]);

      // Another look at the same kernel: no second notification.
      kernel.replies.push(probeReplies.torchCpu());
      await inspector.refresh();
      expect(found).toHaveBeenCalledTimes(1);

      // A restart is a new start.
      kernel.replies.push(probeReplies.torchCpu());
      session.setStatus('restarting');
      session.setStatus('idle');
      await until(() => found.mock.calls.length === 2);
    });

    it('checks a fingerprint read after the probe, as of a notebook still loading', async () => {
      const found = jest.fn();
      inspector.driftFound.connect((_, drift) => found(drift.map(f => f.id)));
      inspector.setTarget(target());
      inspector.watch();
      await until(() => inspector.phase === 'probed');
      expect(found).not.toHaveBeenCalled();

      recordOlderNumpy();

      await until(() => found.mock.calls.length === 1);
      expect(found.mock.calls[0]).toEqual([['drift-package-numpy']]);
    });

    it("counts the server's finding of another environment as drift, in the panel and the notification", async () => {
      const elsewhere: IFinding = {
        id: 'kernel-not-in-recorded-environment',
        severity: 'warning',
        title:
          'This kernel runs in another environment than the notebook recorded',
        evidence: 'recorded: /opt/envs/old; running: /opt/envs/torch-cpu',
        fix: 'Switch to the kernel of /opt/envs/old (Kernel > Change Kernel)',
        restart: false
      };
      server = fakeServer(async request => {
        switch (endpoint(request)) {
          case 'diagnose': {
            const body = await request.clone().json();
            const report = body.probe
              ? diagnoses.torchCpuProbe()
              : diagnoses.torchCpuServer();
            report.findings.push(elsewhere);
            return { ...report, kernel_id: body.kernel_id };
          }
          case 'probe':
            return { expression: 'PROBE', deep: false };
          case 'envs':
            return environmentList();
          case 'envs/torch-cpu':
            return torchCpuPackages();
        }
        throw new Error(`unexpected request ${request.url}`);
      });
      inspector.dispose();
      inspector = new EnvironmentInspector({
        serverSettings: server.settings,
        gpuModel,
        translator: nullTranslator
      });
      writeFingerprint(
        notebook,
        makeFingerprint({
          probe: probeOf(probeReplies.torchCpu()),
          environment: null,
          snapshot: a5000Snapshot(),
          torchCuda: 'cpu',
          now: new Date('2026-11-01T00:00:00Z')
        })
      );
      const found = jest.fn();
      inspector.driftFound.connect((_, drift) => found(drift.map(f => f.id)));
      inspector.setTarget(target());
      await until(() => inspector.phase === 'probed');

      expect(inspector.drift.map(f => f.id)).toEqual([
        'kernel-not-in-recorded-environment'
      ]);
      expect(found.mock.calls).toEqual([
        [['kernel-not-in-recorded-environment']]
      ]);
      expect(
        inspector.findings.filter(f => f.id === elsewhere.id)
      ).toHaveLength(1);
    });

    it('compares again when the fingerprint is updated', async () => {
      recordOlderNumpy();
      inspector.setTarget(target());
      await until(() => inspector.phase === 'probed');
      expect(inspector.drift).toHaveLength(1);

      const current = await inspector.currentFingerprint();
      writeFingerprint(notebook, current!);

      await until(() => inspector.drift.length === 0);
      expect(diagnoseBodies[diagnoseBodies.length - 1].expected_prefix).toBe(
        current!.environment.prefix
      );
      expect(kernel.requests).toHaveLength(1);
    });
  });
});
