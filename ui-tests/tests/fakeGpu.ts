import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

/**
 * The real nvidia-smi captures the fake nvidia-smi replays.
 */
export const SMI_FIXTURES = path.resolve(
  __dirname,
  '..',
  '..',
  'testdata',
  'nvidia-smi'
);

/**
 * The fake nvidia-smi's settings that replay the real 8× V100S capture: eight
 * busy GPUs at 57 to 66 °C, four of them 97 to 99 % full.
 */
export const V100S_X8 = {
  FAKE_SMI_XML: path.join(
    SMI_FIXTURES,
    'xml',
    'tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml'
  )
};

/**
 * The control file of the test server's fake nvidia-smi
 * (see jupyter_server_test_config.py).
 */
const CONTROL = path.resolve(
  __dirname,
  '..',
  '.fake-gpu',
  'fake-nvidia-smi.json'
);

/**
 * Change what the running server's fake nvidia-smi answers from its next call:
 * FAKE_SMI_* settings, e.g. `{ FAKE_SMI_ERROR: <error capture> }`.
 */
export function setFakeGpu(settings: Record<string, string>): void {
  fs.writeFileSync(CONTROL, JSON.stringify(settings));
}

/**
 * Make the fake nvidia-smi fail as a real one did: print the capture
 * `errors/<capture>` and exit with `exitCode`.
 */
export function failLike(capture: string, exitCode: string): void {
  setFakeGpu({
    FAKE_SMI_ERROR: path.join(SMI_FIXTURES, 'errors', capture),
    FAKE_SMI_EXIT: exitCode
  });
}

/**
 * Back to replaying the machine the server was started with.
 */
export function resetFakeGpu(): void {
  fs.rmSync(CONTROL, { force: true });
}

/**
 * Replay another capture (`null`: the one the server started with). The
 * server reads the slow facts, the MIG layout among them, again only after a
 * failed read, as when a real machine's GPUs change: fail once in between.
 */
export async function replaceGpus(
  page: IJupyterLabPageFixture,
  baseURL: string,
  settings: Record<string, string> | null
): Promise<void> {
  const errorKind = async (): Promise<string | null> => {
    const response = await page.request.get(`${baseURL}/gpu-monitor/api/gpus`);
    return (await response.json()).error?.kind ?? null;
  };
  failLike('no-devices-were-found.txt', '6');
  await expect.poll(errorKind).toBe('no_devices');
  if (settings) {
    setFakeGpu(settings);
  } else {
    resetFakeGpu();
  }
  await expect.poll(errorKind).toBeNull();
}
