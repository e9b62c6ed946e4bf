/**
 * @jest-environment node
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import {
  isPythonKernel,
  parseProbeReply,
  PROBE_NAME,
  ProbeError,
  probeRequest,
  runProbe
} from '../env/probe';
import { ExecuteReply, probeReplies } from './envPayloads';

/**
 * A kernel that answers each execute request with `reply` (never, when
 * undefined) and remembers what it was asked.
 */
function fakeKernel(
  reply?: ExecuteReply,
  spec: { language: string } | undefined = { language: 'python' }
) {
  const requests: KernelMessage.IExecuteRequestMsg['content'][] = [];
  const futures: { isDisposed: boolean }[] = [];
  const kernel = {
    spec: Promise.resolve(spec),
    info: Promise.resolve({ language_info: { name: 'python' } }),
    requestExecute(content: KernelMessage.IExecuteRequestMsg['content']) {
      requests.push(content);
      const future = {
        isDisposed: false,
        done:
          reply === undefined
            ? new Promise(() => undefined)
            : Promise.resolve({ content: reply }),
        dispose() {
          future.isDisposed = true;
        }
      };
      futures.push(future);
      return future;
    }
  };
  return {
    kernel: kernel as unknown as Kernel.IKernelConnection,
    requests,
    futures
  };
}

describe('the probe request', () => {
  it('is silent: no cell, no history, no execution count', () => {
    expect(probeRequest('1 + 1')).toEqual({
      code: '',
      silent: true,
      store_history: false,
      user_expressions: { [PROBE_NAME]: '1 + 1' },
      allow_stdin: false,
      stop_on_error: false
    });
  });
});

describe('parseProbeReply', () => {
  it("reads IPython's JSON answer: torch's version without importing it", () => {
    const probe = parseProbeReply(probeReplies.torchCpu());
    expect(probe.prefix).toMatch(/\.kernel-envs\/torch-cpu$/);
    expect(probe.python_version).toBe('3.11.7');
    expect(probe.packages).toMatchObject({
      torch: '2.13.0+cpu',
      numpy: '2.4.6',
      pandas: null
    });
    expect(probe.torch).toBeNull();
  });

  it("reads a deep check's facts from torch", () => {
    const probe = parseProbeReply(probeReplies.torchCpuDeep());
    expect(probe.deep).toBe(true);
    expect(probe.torch).toMatchObject({
      version: '2.13.0+cpu',
      cuda: null,
      cuda_available: false,
      imported_by_probe: true
    });
  });

  it('reads the JSON repr when a kernel offers text only', () => {
    const reply = probeReplies.plain() as any;
    const data = reply.user_expressions[PROBE_NAME].data;
    const json = data['application/json'];
    delete data['application/json'];
    expect(parseProbeReply(reply)).toEqual(json);
  });

  it("tells the kernel's error when the expression raised", () => {
    expect(() => parseProbeReply(probeReplies.error())).toThrow(
      new ProbeError('failed', 'ZeroDivisionError: division by zero')
    );
  });

  it('refuses an answer that is not the probe', () => {
    const reply = probeReplies.plain() as any;
    reply.user_expressions[PROBE_NAME].data = { 'text/plain': '42' };
    const thrown = (() => {
      try {
        parseProbeReply(reply);
      } catch (error) {
        return error as ProbeError;
      }
    })();
    expect(thrown?.kind).toBe('unexpected');

    delete reply.user_expressions[PROBE_NAME];
    expect(() => parseProbeReply(reply)).toThrow(ProbeError);
  });

  it('tells a failed request', () => {
    const reply = {
      status: 'error',
      ename: 'KeyboardInterrupt',
      evalue: '',
      traceback: []
    } as unknown as ExecuteReply;
    expect(() => parseProbeReply(reply)).toThrow('KeyboardInterrupt: ');
  });
});

describe('runProbe', () => {
  it('evaluates the expression silently and reads the answer', async () => {
    const { kernel, requests, futures } = fakeKernel(probeReplies.torchCpu());
    const probe = await runProbe(kernel, 'EXPRESSION', 1000);
    expect(probe.packages['torch']).toBe('2.13.0+cpu');
    expect(requests).toEqual([probeRequest('EXPRESSION')]);
    expect(futures[0].isDisposed).toBe(true);
  });

  it('gives up after the timeout, and forgets the request', async () => {
    jest.useFakeTimers();
    try {
      const { kernel, futures } = fakeKernel();
      const probing = runProbe(kernel, 'EXPRESSION', 5000);
      const outcome = probing.catch((error: ProbeError) => error.kind);
      jest.advanceTimersByTime(5000);
      expect(await outcome).toBe('timeout');
      expect(futures[0].isDisposed).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('isPythonKernel', () => {
  it("goes by the kernelspec's language", async () => {
    expect(await isPythonKernel(fakeKernel().kernel)).toBe(true);
    expect(
      await isPythonKernel(fakeKernel(undefined, { language: 'R' }).kernel)
    ).toBe(false);
  });

  it('asks the kernel when its spec is unknown', async () => {
    expect(await isPythonKernel(fakeKernel(undefined, undefined).kernel)).toBe(
      true
    );
  });
});
