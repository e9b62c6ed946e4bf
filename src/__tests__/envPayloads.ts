/**
 * Kernel replies and REST payloads of the environment inspector, recorded
 * from a real Jupyter server (this extension, nvidia-smi replaying
 * `xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml` through the test suite's
 * fake) with real ipykernel kernels in the environments `make kernel-envs`
 * builds: `.kernel-envs/torch-cpu` (PyTorch 2.13.0+cpu, numpy 2.4.6) and
 * `.kernel-envs/plain` (neither):
 *
 * - `*-probe-reply.json`: the content of the execute reply to the silent
 *   probe request (`GET probe?deep=0`, or `deep=1` for `*-deep-*`);
 *   `probe-error-reply.json` the reply when the expression raises (`1/0`).
 * - `*-diagnose-server.json`: `POST diagnose` with `probe: null`;
 *   `*-diagnose-probe.json` with the probe's answer.
 * - `torch-cpu-cvd-*`: the same with the server (so the kernel) started with
 *   `CUDA_VISIBLE_DEVICES=1,7`.
 * - `envs.json`: `GET envs`; `envs-torch-cpu.json`: `GET envs/torch-cpu`.
 * - `h100-mig-list-snapshot.json`: `jupyter-gpu-monitor snapshot --json
 *   --from csv/h100-mig-3g-2g-1g-1g-list-gpus-L.txt` (an H100 with four MIG
 *   devices, their UUIDs), recorded anew by `make record-payloads`.
 */
import { KernelMessage } from '@jupyterlab/services';

import { IEnvironmentList, IEnvironmentPackages } from '../restapi/envs';
import { IGpuSnapshot } from '../restapi/gpus';
import { IDiagnosis, IKernelProbe } from '../restapi/inspector';

import ENVS from './fixtures/envs.json';
import ENVS_TORCH_CPU from './fixtures/envs-torch-cpu.json';
import H100_MIG from './fixtures/h100-mig-list-snapshot.json';
import PLAIN_DIAGNOSE_PROBE from './fixtures/plain-diagnose-probe.json';
import PLAIN_PROBE_REPLY from './fixtures/plain-probe-reply.json';
import PROBE_ERROR_REPLY from './fixtures/probe-error-reply.json';
import CVD_DIAGNOSE_PROBE from './fixtures/torch-cpu-cvd-diagnose-probe.json';
import CVD_PROBE_REPLY from './fixtures/torch-cpu-cvd-probe-reply.json';
import DEEP_PROBE_REPLY from './fixtures/torch-cpu-deep-probe-reply.json';
import TORCH_DIAGNOSE_PROBE from './fixtures/torch-cpu-diagnose-probe.json';
import TORCH_DIAGNOSE_SERVER from './fixtures/torch-cpu-diagnose-server.json';
import TORCH_PROBE_REPLY from './fixtures/torch-cpu-probe-reply.json';

/**
 * The content of an execute reply.
 */
export type ExecuteReply = KernelMessage.IExecuteReplyMsg['content'];

/**
 * A deep copy of a recorded payload, so that a test cannot change another's.
 */
function copy<T>(payload: unknown): T {
  return JSON.parse(JSON.stringify(payload)) as T;
}

/**
 * The recorded execute replies to the probe, by kernel.
 */
export const probeReplies = {
  /**
   * torch-cpu, torch not imported: versions only.
   */
  torchCpu: (): ExecuteReply => copy(TORCH_PROBE_REPLY),
  /**
   * torch-cpu, deep check: torch imported and asked about CUDA.
   */
  torchCpuDeep: (): ExecuteReply => copy(DEEP_PROBE_REPLY),
  /**
   * torch-cpu started with `CUDA_VISIBLE_DEVICES=1,7`.
   */
  torchCpuVisibleDevices: (): ExecuteReply => copy(CVD_PROBE_REPLY),
  /**
   * plain: neither torch nor numpy.
   */
  plain: (): ExecuteReply => copy(PLAIN_PROBE_REPLY),
  /**
   * An expression that raised in the kernel.
   */
  error: (): ExecuteReply => copy(PROBE_ERROR_REPLY)
};

/**
 * The probe's answer in a recorded reply.
 */
export function probeOf(reply: ExecuteReply): IKernelProbe {
  const ok = reply as KernelMessage.IExecuteReplyMsg['content'] & {
    user_expressions: { [name: string]: { data: { [mime: string]: unknown } } };
  };
  return copy(
    ok.user_expressions['gpu_monitor_probe'].data['application/json']
  );
}

/**
 * The recorded `POST diagnose` answers.
 */
export const diagnoses = {
  /**
   * torch-cpu, server facts only: the CPU-only finding from the records.
   */
  torchCpuServer: (): IDiagnosis => copy(TORCH_DIAGNOSE_SERVER),
  /**
   * torch-cpu with the probe's answer.
   */
  torchCpuProbe: (): IDiagnosis => copy(TORCH_DIAGNOSE_PROBE),
  /**
   * torch-cpu with `CUDA_VISIBLE_DEVICES=1,7`: an error and a warning.
   */
  torchCpuVisibleDevices: (): IDiagnosis => copy(CVD_DIAGNOSE_PROBE),
  /**
   * plain with the probe's answer: no finding.
   */
  plainProbe: (): IDiagnosis => copy(PLAIN_DIAGNOSE_PROBE)
};

/**
 * `GET envs`: plain, torch-cpu and the server's own venv.
 */
export function environmentList(): IEnvironmentList {
  return copy(ENVS);
}

/**
 * `GET envs/torch-cpu`.
 */
export function torchCpuPackages(): IEnvironmentPackages {
  return copy(ENVS_TORCH_CPU);
}

/**
 * An H100 with four MIG devices, each with its UUID.
 */
export function h100MigSnapshot(): IGpuSnapshot {
  return copy(H100_MIG);
}
