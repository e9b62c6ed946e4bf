/**
 * REST payloads recorded from the server extension while it read real
 * nvidia-smi captures of `testdata/nvidia-smi` through the test
 * suite's fake nvidia-smi, and the machine the recording ran on (its CPU,
 * memory, disk and network). `make record-payloads`
 * (scripts/record_payloads.py) records them anew after a change to what the
 * routes answer.
 *
 * - `rtx-a5000-x2-snapshot.json`: `GET gpus`, replaying
 *   `xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml` (two RTX A5000, one
 *   llama-server process on both).
 * - `rtx-a5000-x2-history-with-gap.json`: `GET gpus/history` of a server
 *   sampling every second: 38 readings, then nobody asked for longer than
 *   its `idle_seconds`, so the sampler stopped, and 4 readings more.
 * - `driver-not-loaded-snapshot.json`: `GET gpus`, replaying
 *   `errors/driver-not-loaded-couldnt-communicate.txt`.
 * - `a100-mig-snapshot.json`: `jupyter-gpu-monitor snapshot --json --from
 *   xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml` (MIG on).
 * - `no-gpu-snapshot.json`: `jupyter-gpu-monitor snapshot --json` on this
 *   machine, which has no NVIDIA driver (no libnvidia-ml.so, no nvidia-smi).
 * - `tesla-v100s-x8-snapshot.json`: the same, `--from
 *   xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml` (eight V100S of
 *   32 GiB, all nearly full, 353 to 3009 MiB free).
 * - `gb200-x2-gpu1-lost-snapshot.json`: the same, `--from
 *   xml/gb200-x2-gpu1-lost-driver-580.65-v13.xml` (two GB200; GPU 1, bus
 *   0000:0B:00.0, is lost).
 *
 * The kernel payloads come from a `jupyter server` (interval 1 s,
 * `idle_seconds` 3) with two notebook sessions, `train.ipynb` and
 * `idle.ipynb`, each with a real python3 kernel; the fake nvidia-smi's
 * `FAKE_SMI_PIDS` made a capture's process the kernel of `train.ipynb`:
 *
 * - `rtx-a5000-x2-kernel-snapshot.json`, `rtx-a5000-x2-kernels.json`:
 *   `GET gpus` and `GET kernels` with the A5000 capture's llama-server
 *   (100477) as that kernel: 22430 MiB on GPU 0, 17246 MiB on GPU 1.
 * - `rtx-a5000-x2-kernel-spans.json`: `POST kernels/<id>/spans` for a span
 *   shorter than two reads, one during which the kernel took its memory,
 *   one across a gap (nobody asked for 6 s, so the sampler stopped) after
 *   which it took its memory again, one before it held any memory, and one
 *   during which it held its memory and added none.
 * - `tesla-t4-kernel-snapshot.json`, `tesla-t4-kernel-spans.json`: then the
 *   T4 capture (`xml/tesla-t4-linux-driver-515.105-v11-2procs.xml`) with its
 *   process 5762 (1005 MiB) as the kernel, and a 6 s span during which the
 *   kernel took it.
 *
 * The lab payloads are `GET lab` of user ana's server, from a real
 * Prometheus scraping three servers of three machines: node-1 (ana's, the
 * two A5000, both held by the kernel of her `train.ipynb`, idle), node-2
 * (cleo's, the eight V100S under load, no kernel) and node-3 (dan's, eight
 * idle H100 80GB): `lab-3-machines.json`, then `lab-node-3-stopped.json`
 * once node-3's server stopped. `lab_open_url` is
 * `https://hub.lab/hub/spawn/{user}/{node}`. `lab-ledger-1h.json` is
 * `GET lab/ledger?since=3600` ten seconds after her notebook began to
 * idle-hold both GPUs, the Prometheus evaluating `prometheus/lab.yml`'s
 * rules every second. `lab-exporters.json` is `GET lab` from a Prometheus
 * scraping only two exporters' real scrapes, machines without a server of
 * ours: ub20-a100-k8s's DCGM exporter (an A100 in MIG mode) and gpu-box-7's
 * nvidia_gpu_exporter (an H100 under load).
 */
import {
  IGpuHistory,
  IGpuSnapshot,
  ILabLedger,
  ILabView
} from '../restapi/gpus';
import { IKernelSummary, ISpansAnswer } from '../restapi/kernels';

import A100_MIG from './fixtures/a100-mig-snapshot.json';
import DRIVER_NOT_LOADED from './fixtures/driver-not-loaded-snapshot.json';
import GB200_LOST from './fixtures/gb200-x2-gpu1-lost-snapshot.json';
import LAB_3_MACHINES from './fixtures/lab-3-machines.json';
import LAB_EXPORTERS from './fixtures/lab-exporters.json';
import LAB_LEDGER_1H from './fixtures/lab-ledger-1h.json';
import LAB_NODE_3_STOPPED from './fixtures/lab-node-3-stopped.json';
import NO_GPU from './fixtures/no-gpu-snapshot.json';
import A5000_HISTORY from './fixtures/rtx-a5000-x2-history-with-gap.json';
import A5000_KERNEL_SNAPSHOT from './fixtures/rtx-a5000-x2-kernel-snapshot.json';
import A5000_KERNEL_SPANS from './fixtures/rtx-a5000-x2-kernel-spans.json';
import A5000_KERNELS from './fixtures/rtx-a5000-x2-kernels.json';
import A5000_SNAPSHOT from './fixtures/rtx-a5000-x2-snapshot.json';
import T4_KERNEL_SNAPSHOT from './fixtures/tesla-t4-kernel-snapshot.json';
import T4_KERNEL_SPANS from './fixtures/tesla-t4-kernel-spans.json';
import V100S_X8 from './fixtures/tesla-v100s-x8-snapshot.json';

/**
 * A deep copy of a recorded payload, so that a test cannot change another's.
 */
function copy<T>(payload: unknown): T {
  return JSON.parse(JSON.stringify(payload)) as T;
}

/**
 * The lab of three machines, all reporting, as ana sees it.
 */
export function lab3Machines(): ILabView {
  return copy<ILabView>(LAB_3_MACHINES);
}

/**
 * The same lab once node-3's server stopped: node-3 known, not reporting,
 * without GPUs.
 */
export function labNode3Stopped(): ILabView {
  return copy<ILabView>(LAB_NODE_3_STOPPED);
}

/**
 * A lab of two machines that only their exporters report, as ana sees it.
 */
export function labExporters(): ILabView {
  return copy<ILabView>(LAB_EXPORTERS);
}

/**
 * Ana's notebook, idle-holding two GPUs for about ten seconds of the last
 * hour: 0.007 GPU-hours.
 */
export function labLedger1h(): ILabLedger {
  return copy<ILabLedger>(LAB_LEDGER_1H);
}

/**
 * Two RTX A5000: GPU 0 at 22437 / 24564 MiB (91.3 %), GPU 1 at 17253 MiB.
 */
export function a5000Snapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(A5000_SNAPSHOT);
}

/**
 * About 42 readings of the two RTX A5000 and the machine, with a gap of
 * about 10 s before the last 4.
 */
export function a5000History(): IGpuHistory {
  return copy<IGpuHistory>(A5000_HISTORY);
}

/**
 * The two RTX A5000 with their process as the kernel of `train.ipynb`.
 */
export function a5000KernelSnapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(A5000_KERNEL_SNAPSHOT);
}

/**
 * `GET kernels`: `train.ipynb`'s kernel with 39676 MiB on both GPUs, then
 * `idle.ipynb`'s with none.
 */
export function a5000Kernels(): IKernelSummary[] {
  return copy<IKernelSummary[]>(A5000_KERNELS);
}

/**
 * `train.ipynb`'s kernel over five spans: too short; taking its memory
 * (peak 39676 MiB); across a gap, taking it again; before it held any;
 * holding it, adding none.
 */
export function a5000KernelSpans(): ISpansAnswer {
  return copy<ISpansAnswer>(A5000_KERNEL_SPANS);
}

/**
 * A Tesla T4 (13939 MiB free) whose process 5762 is `train.ipynb`'s kernel.
 */
export function t4KernelSnapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(T4_KERNEL_SNAPSHOT);
}

/**
 * `train.ipynb`'s kernel over 6 s on the T4, taking 1005 MiB: 0 %.
 */
export function t4KernelSpans(): ISpansAnswer {
  return copy<ISpansAnswer>(T4_KERNEL_SPANS);
}

/**
 * An A100 80GB with MIG on: four instances, no utilisation.
 */
export function a100MigSnapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(A100_MIG);
}

/**
 * Eight Tesla V100S, 32510 MiB each, all nearly full: GPU 3 has 411 MiB
 * free at 23 %, GPU 7 the most free (3009 MiB) at 99 %.
 */
export function v100sX8Snapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(V100S_X8);
}

/**
 * Two GB200, GPU 1 lost: every reading of it in the XML said "GPU is lost";
 * GPU 0 answers, with uncorrectable memory errors.
 */
export function gb200LostSnapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(GB200_LOST);
}

/**
 * A server without an NVIDIA driver: neither NVML nor nvidia-smi is there.
 */
export function noGpuSnapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(NO_GPU);
}

/**
 * A server whose NVIDIA kernel module is not loaded.
 */
export function driverNotLoadedSnapshot(): IGpuSnapshot {
  return copy<IGpuSnapshot>(DRIVER_NOT_LOADED);
}

/**
 * The recorded snapshot with its timestamp and, per GPU index, readings
 * replaced: how a test makes the A5000s busier, hotter or fuller.
 */
export function a5000At(
  timestamp: number,
  changes: { [gpuIndex: number]: Partial<IGpuSnapshot['gpus'][0]> } = {}
): IGpuSnapshot {
  const snapshot = a5000Snapshot();
  snapshot.timestamp = timestamp;
  snapshot.gpus = snapshot.gpus.map(gpu => ({
    ...gpu,
    ...changes[gpu.index]
  }));
  return snapshot;
}

/**
 * `count` readings one `intervalSeconds` apart from `start` of `gpuCount`
 * GPUs, each repeating GPU 0's recorded values: a history as long as a test
 * needs, in the server's columnar form.
 */
export function repeatedHistory(
  start: number,
  count: number,
  gpuCount = 2,
  intervalSeconds = 1
): IGpuHistory {
  const recorded = a5000History();
  const model = recorded.gpus[0];
  const repeat = <T>(value: T): T[] => new Array<T>(count).fill(value);
  return {
    interval_seconds: intervalSeconds,
    history_seconds: recorded.history_seconds,
    timestamps: Array.from(
      { length: count },
      (_, i) => start + i * intervalSeconds
    ),
    spacing_seconds: repeat(intervalSeconds),
    gpus: Array.from({ length: gpuCount }, (_, index) => ({
      index,
      uuid: `GPU-${index}`,
      name: model.name,
      utilization_gpu: repeat(model.utilization_gpu[0]),
      utilization_memory: repeat(model.utilization_memory[0]),
      memory_used_mib: repeat(model.memory_used_mib[0]),
      memory_total_mib: repeat(model.memory_total_mib[0]),
      temperature_c: repeat(model.temperature_c[0]),
      power_draw_w: repeat(model.power_draw_w[0]),
      fan_speed_pct: repeat(model.fan_speed_pct[0]),
      sm_clock_mhz: repeat(model.sm_clock_mhz[0]),
      pcie_received_bytes_per_second: repeat(
        model.pcie_received_bytes_per_second[0]
      ),
      nvlink_received_bytes_per_second: repeat(
        model.nvlink_received_bytes_per_second[0]
      )
    })),
    machine: null
  };
}
