/**
 * @jest-environment node
 */

import {
  cudaVisibleDevicesSource,
  gpuLoads,
  IRoomNeeded,
  isCudaVisibleDevicesCell,
  leastUsed,
  noRoomText
} from '../freeGpu/freeGpu';
import { GpuHistoryBuffer } from '../gpu/history';
import { formatAge, formatDuration } from '../format/units';
import { IGpuSnapshot } from '../restapi/gpus';
import {
  a100MigSnapshot,
  a5000History,
  a5000KernelSnapshot,
  a5000Snapshot,
  repeatedHistory,
  v100sX8Snapshot
} from './payloads';
import { trans } from './trans';

/**
 * The panel's default rule: a fifth of the card free, no recorded need.
 */
const DEFAULT_ROOM: IRoomNeeded = { need: null, minFreeShare: 0.2 };

/**
 * No room needed: for the tests of how busy a GPU has been.
 */
const ANY_ROOM: IRoomNeeded = { need: null, minFreeShare: 0 };

/**
 * Five minutes of readings, from 1000 to 1299, of the snapshot's GPUs: GPU 1
 * busy at 97 %, GPU 0 idle.
 */
function gpu1BusyFor5Minutes(snapshot: IGpuSnapshot): GpuHistoryBuffer {
  const readings = repeatedHistory(1000, 300);
  readings.gpus.forEach((series, i) => {
    series.uuid = snapshot.gpus[i].uuid;
  });
  readings.gpus[1].utilization_gpu.fill(97);
  const history = new GpuHistoryBuffer();
  history.append(readings);
  return history;
}

describe('the least used GPU', () => {
  it('is the A5000 with the less memory in use, both idle', () => {
    const history = new GpuHistoryBuffer();
    history.append(a5000History());

    const loads = gpuLoads(a5000Snapshot(), history);

    expect(loads.map(gpu => [gpu.index, gpu.freeMiB])).toEqual([
      [0, 1678],
      [1, 6862]
    ]);
    expect(loads[0].memoryShare).toBeCloseTo(22437 / 24564, 3);
    expect(loads[0].utilizationPercent).toBe(0);
    expect(leastUsed(loads, DEFAULT_ROOM)?.index).toBe(1);
  });

  it('among GPUs as busy, is the one with the most memory free: the larger card', () => {
    // A mixed server: GPU 0 a 48 GiB card, GPU 1 the A5000, both idle and a
    // quarter full.
    const snapshot = a5000Snapshot();
    const [large, small] = snapshot.gpus;
    Object.assign(large, {
      memory_total_mib: 49152,
      memory_used_mib: 12288,
      memory_free_mib: 36864,
      utilization_gpu: 0
    });
    Object.assign(small, {
      memory_used_mib: 6141,
      memory_free_mib: 18423,
      utilization_gpu: 0
    });
    const loads = gpuLoads(snapshot, new GpuHistoryBuffer());
    expect(loads[0].memoryShare).toBe(loads[1].memoryShare);

    expect(leastUsed(loads, DEFAULT_ROOM)?.index).toBe(0);
    expect(leastUsed([...loads].reverse(), DEFAULT_ROOM)?.index).toBe(0);
  });

  it('weighs the last minutes of utilisation, not only the memory now', () => {
    // GPU 1 was busy at 97 % over the last minutes; GPU 0 was idle.
    const snapshot = a5000Snapshot();
    const history = gpu1BusyFor5Minutes(snapshot);
    snapshot.timestamp = 1299;

    const loads = gpuLoads(snapshot, history);

    expect(loads.map(gpu => gpu.utilizationPercent)).toEqual([0, 97]);
    expect(loads.map(gpu => gpu.measuredSeconds)).toEqual([299, 299]);
    expect(leastUsed(loads, ANY_ROOM)?.index).toBe(0);
  });

  it('uses the readings of the snapshot when the history stopped long before', () => {
    // The history is polled only while the panel shows it.
    const snapshot = a5000Snapshot();
    const history = gpu1BusyFor5Minutes(snapshot);
    snapshot.timestamp = 1299 + 3600;

    const loads = gpuLoads(snapshot, history);

    expect(loads.map(gpu => gpu.utilizationPercent)).toEqual([0, 0]);
    // The current reading alone: measured over no time at all.
    expect(loads.map(gpu => gpu.measuredSeconds)).toEqual([0, 0]);
  });

  it('uses the readings of the snapshot without a history', () => {
    const snapshot = a5000Snapshot();
    snapshot.gpus[1].utilization_gpu = 100;

    expect(leastUsed(gpuLoads(snapshot, null), ANY_ROOM)?.index).toBe(0);
  });

  it('never picks a GPU split into MIG instances', () => {
    expect(gpuLoads(a100MigSnapshot(), null)).toEqual([]);
    expect(leastUsed([], DEFAULT_ROOM)).toBeNull();
  });
});

describe('a GPU proposed as free', () => {
  it('must have room: none of eight nearly full V100S is, and the hint says why', () => {
    // GPU 3 is the least busy (23 %) but has 411 MiB of 32 GiB free; the
    // old rule, averaging memory share and utilisation, proposed it.
    const loads = gpuLoads(v100sX8Snapshot(), null);

    expect(loads).toHaveLength(8);
    expect(leastUsed(loads, DEFAULT_ROOM)).toBeNull();
    expect(noRoomText(loads, DEFAULT_ROOM, trans)).toBe(
      'No GPU has 20 % of its memory free; the most free: GPU 7, 2.9 GiB.'
    );
  });

  it('needs only the room the notebook recorded, per GPU, when it has one', () => {
    const loads = gpuLoads(v100sX8Snapshot(), null);
    const small: IRoomNeeded = {
      need: {
        peakMemoryMiB: 800,
        gpuCount: 1,
        perGpuMiB: [800],
        gpuName: null,
        date: null
      },
      minFreeShare: 0.2
    };
    // 800 MiB fit on GPU 0 (821 MiB free, 97 %), 1, 2, 4 and 7: of these
    // GPU 1 (75 %) is the least busy.
    expect(leastUsed(loads, small)?.index).toBe(1);

    // 12000 MiB over two GPUs, 7000 of it on the first: the GPU proposed
    // alone must hold the larger part.
    const large: IRoomNeeded = {
      need: {
        peakMemoryMiB: 12000,
        gpuCount: 2,
        perGpuMiB: [7000, 5000],
        gpuName: null,
        date: null
      },
      minFreeShare: 0.2
    };
    expect(leastUsed(loads, large)).toBeNull();
    expect(noRoomText(loads, large, trans)).toBe(
      'No GPU has the 6.8 GiB this notebook needed free; the most free: GPU 7, 2.9 GiB.'
    );
  });

  it("counts what the notebook's own kernel holds as room: a restart frees it", () => {
    // The recorded kernel of train.ipynb holds 22430 MiB on GPU 0 and
    // 17246 MiB on GPU 1 of the two A5000s, which then have 1678 and 6862 MiB
    // free: no GPU has half its card free, unless the kernel's own memory
    // counts.
    const snapshot = a5000KernelSnapshot();
    const kernelId = snapshot.gpus[0].processes[0].kernel_id!;
    const half: IRoomNeeded = { need: null, minFreeShare: 0.5 };

    expect(leastUsed(gpuLoads(snapshot, null), half)).toBeNull();
    const loads = gpuLoads(snapshot, null, kernelId);
    expect(loads.map(gpu => gpu.ownMiB)).toEqual([22430, 17246]);
    expect(leastUsed(loads, half)?.index).toBe(1);
  });

  it('is the least used of those with room on two A5000s', () => {
    // GPU 0 has 1678 MiB free (6.8 %): only GPU 1 (6862 MiB) has a fifth.
    const loads = gpuLoads(a5000Snapshot(), null);
    expect(leastUsed(loads, { need: null, minFreeShare: 0.5 })).toBeNull();
    expect(leastUsed(loads, DEFAULT_ROOM)?.index).toBe(1);
  });
});

describe('the CUDA_VISIBLE_DEVICES cell', () => {
  it('numbers the GPUs as nvidia-smi does and says when it must run', () => {
    expect(cudaVisibleDevicesSource([1], trans)).toBe(
      [
        '# Run this cell before torch (or any CUDA library) initialises CUDA.',
        '# If the kernel has already used the GPU, restart it first.',
        'import os',
        '',
        'os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"',
        'os.environ["CUDA_VISIBLE_DEVICES"] = "1"'
      ].join('\n')
    );
    expect(cudaVisibleDevicesSource([0, 2], trans)).toContain(
      'os.environ["CUDA_VISIBLE_DEVICES"] = "0,2"'
    );
  });

  it('is recognised to be replaced, while a cell the user wrote is not', () => {
    const ours = cudaVisibleDevicesSource([0, 2], trans);

    expect(isCudaVisibleDevicesCell(ours, trans)).toBe(true);
    expect(isCudaVisibleDevicesCell(`${ours}\nimport torch`, trans)).toBe(
      false
    );
    expect(
      isCudaVisibleDevicesCell(
        'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"',
        trans
      )
    ).toBe(false);
  });
});

describe('durations and ages', () => {
  it('reads like an execution-time line', () => {
    expect(
      [0.42, 9.96, 38.4, 192, 3599.6, 7512].map(seconds =>
        formatDuration(seconds, trans)
      )
    ).toEqual([
      '0.4 s',
      '10.0 s',
      '38 s',
      '3 min 12 s',
      '1 h 0 min',
      '2 h 5 min'
    ]);
  });

  it('gives the age of a process coarsely', () => {
    expect(
      [-2, 40.7, 754, 3 * 3600 + 59, 2 * 86400 + 1].map(seconds =>
        formatAge(seconds, trans)
      )
    ).toEqual(['0 s', '40 s', '12 min', '3 h', '2 d']);
  });
});
