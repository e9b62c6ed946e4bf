import { Kernel, KernelMessage } from '@jupyterlab/services';

import { IKernelProbe } from '../restapi/inspector';

/**
 * The name the probe's expression goes by in `user_expressions`.
 */
export const PROBE_NAME = 'gpu_monitor_probe';

/**
 * Why the probe has no answer:
 *
 * - `timeout`: the kernel did not answer in time
 * - `failed`: the request or the expression raised; the message is the
 *   kernel's (`ZeroDivisionError: division by zero`)
 * - `unexpected`: the kernel answered something else than the probe's JSON
 */
export type ProbeFailure = 'timeout' | 'failed' | 'unexpected';

/**
 * The probe could not run or did not answer as expected.
 */
export class ProbeError extends Error {
  /**
   * Create an error of a kind, with what the kernel or the browser said.
   */
  constructor(
    readonly kind: ProbeFailure,
    message: string
  ) {
    super(message);
    this.name = 'ProbeError';
  }
}

/**
 * The content of the execute request that evaluates the probe silently: no
 * cell runs, nothing is stored in the history, the execution count stays.
 */
export function probeRequest(
  expression: string
): KernelMessage.IExecuteRequestMsg['content'] {
  return {
    code: '',
    silent: true,
    store_history: false,
    user_expressions: { [PROBE_NAME]: expression },
    allow_stdin: false,
    stop_on_error: false
  };
}

/**
 * The probe's answer in an execute reply.
 *
 * IPython offers it as `application/json`; other Python kernels give its
 * repr, which is the same JSON, as `text/plain`.
 *
 * @throws {ProbeError} when the request or the expression failed, or the
 *   answer is not the probe's
 */
export function parseProbeReply(
  content: KernelMessage.IExecuteReplyMsg['content']
): IKernelProbe {
  if (content.status !== 'ok') {
    const failed = content as KernelMessage.IReplyErrorContent;
    throw new ProbeError(
      'failed',
      failed.ename ? `${failed.ename}: ${failed.evalue}` : content.status
    );
  }
  const result = (content.user_expressions ?? {})[PROBE_NAME] as
    | {
        status?: string;
        data?: Record<string, unknown>;
        ename?: string;
        evalue?: string;
      }
    | undefined;
  if (!result) {
    throw new ProbeError('unexpected', 'no user expression in the reply');
  }
  if (result.status !== 'ok') {
    throw new ProbeError('failed', `${result.ename}: ${result.evalue}`);
  }
  const data = result.data ?? {};
  let answer: unknown = data['application/json'];
  if (answer === undefined && typeof data['text/plain'] === 'string') {
    try {
      answer = JSON.parse(data['text/plain']);
    } catch {
      answer = undefined;
    }
  }
  if (!Private.isProbe(answer)) {
    throw new ProbeError('unexpected', String(data['text/plain'] ?? ''));
  }
  return answer;
}

/**
 * Evaluate the probe in a kernel, silently.
 *
 * @param timeoutMs - how long the kernel may take to answer
 * @throws {ProbeError} when it fails or does not answer in time (the kernel
 *   may still evaluate it later; its answer is then ignored)
 */
export async function runProbe(
  kernel: Kernel.IKernelConnection,
  expression: string,
  timeoutMs: number
): Promise<IKernelProbe> {
  const future = kernel.requestExecute(probeRequest(expression), true);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ProbeError('timeout', `${timeoutMs} ms`)),
      timeoutMs
    );
  });
  try {
    const reply = await Promise.race([future.done, timeout]);
    return parseProbeReply(reply.content);
  } catch (error) {
    if (error instanceof ProbeError) {
      throw error;
    }
    throw new ProbeError(
      'failed',
      error instanceof Error ? error.message : String(error)
    );
  } finally {
    clearTimeout(timer);
    if (!future.isDisposed) {
      future.dispose();
    }
  }
}

/**
 * Whether the kernel runs Python, the only language the probe is written in.
 *
 * The kernelspec's language answers without a round trip to the kernel, which
 * would wait behind a running cell.
 */
export async function isPythonKernel(
  kernel: Kernel.IKernelConnection
): Promise<boolean> {
  const spec = await kernel.spec;
  const language = spec?.language ?? (await kernel.info).language_info.name;
  return language.toLowerCase() === 'python';
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Whether a value has the shape of the probe's answer.
   */
  export function isProbe(value: unknown): value is IKernelProbe {
    const probe = value as Partial<IKernelProbe> | null;
    return (
      typeof probe === 'object' &&
      probe !== null &&
      typeof probe.prefix === 'string' &&
      typeof probe.python_version === 'string' &&
      typeof probe.packages === 'object' &&
      probe.packages !== null
    );
  }
}
