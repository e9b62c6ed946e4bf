/**
 * @jest-environment node
 */

import { summarize, summaryText, summaryTitle } from '../gpu/summary';
import {
  a100MigSnapshot,
  a5000At,
  a5000KernelSnapshot,
  a5000Kernels,
  driverNotLoadedSnapshot,
  v100sX8Snapshot
} from './payloads';
import { trans } from './trans';

describe('the status bar summary', () => {
  it('shows the busiest GPU of the capture: both idle, GPU 0 fuller', () => {
    const summary = summarize(a5000At(1), 'busiest');

    expect(summary).toEqual({
      gpuIndex: 0,
      gpuCount: 2,
      utilizationPercent: 0,
      migMode: false,
      memoryUsedMiB: 22437,
      memoryTotalMiB: 24564,
      kernel: false,
      nearlyFull: []
    });
    expect(summaryText(summary!, trans)).toBe(
      '2 GPUs · max 0 % · 21.9/24.0 GiB'
    );
    expect(summaryTitle(summary!, trans)).toMatch(/^GPU 0, the busiest of 2/);
  });

  it('marks the 8× V100S whose GPUs 0, 3, 5 and 6 hold 97 to 99 % of their memory, not those at 91 %', () => {
    for (const mode of ['busiest', 'sum'] as const) {
      const summary = summarize(v100sX8Snapshot(), mode)!;
      expect(summary.nearlyFull).toEqual([0, 3, 5, 6]);
      expect(summaryTitle(summary, trans)).toMatch(
        /^GPUs 0, 3, 5, 6 are nearly out of memory \(95 % or more in use\)\. /
      );
    }
    // A kernel on GPU 1 only (91 %): nothing to mark.
    const snapshot = v100sX8Snapshot();
    snapshot.gpus[1].processes = [
      { ...snapshot.gpus[1].processes[0], kernel_id: 'k' }
    ];
    expect(summarize(snapshot, 'busiest', 'k')!.nearlyFull).toEqual([]);
  });

  it("is about the GPU the current notebook's kernel holds memory on, in either mode", () => {
    // The recorded train.ipynb kernel holds memory on both A5000; here only
    // on GPU 1, the emptier one.
    const [train, idle] = a5000Kernels();
    const snapshot = a5000KernelSnapshot();
    snapshot.gpus[0].processes = [];
    for (const mode of ['busiest', 'sum'] as const) {
      const summary = summarize(snapshot, mode, train.kernel_id)!;
      expect(summary.kernel).toBe(true);
      expect(summaryText(summary, trans)).toBe('GPU 1 · 0 % · 16.8/24.0 GiB');
      expect(summaryTitle(summary, trans)).toMatch(
        /^GPU 1, which this notebook's kernel uses/
      );
    }
    // On both GPUs: the busiest of them, said to be the kernel's.
    const both = summarize(a5000KernelSnapshot(), 'sum', train.kernel_id)!;
    expect(summaryText(both, trans)).toBe('2 GPUs · max 0 % · 21.9/24.0 GiB');
    expect(summaryTitle(both, trans)).toMatch(
      /^GPU 0, the busiest of the 2 GPUs this notebook's kernel uses/
    );
    // A kernel that holds no GPU memory: the server's GPUs, by the mode.
    const none = summarize(snapshot, 'sum', idle.kernel_id)!;
    expect(none.kernel).toBe(false);
    expect(summaryText(none, trans)).toBe('2 GPUs · mean 0 % · 38.8/48.0 GiB');
  });

  it('names a lone GPU by its own index in either mode', () => {
    const snapshot = a5000At(1);
    snapshot.gpus = [{ ...snapshot.gpus[1], index: 3 }];
    for (const mode of ['busiest', 'sum'] as const) {
      expect(summaryText(summarize(snapshot, mode)!, trans)).toBe(
        'GPU 3 · 0 % · 16.8/24.0 GiB'
      );
    }
  });

  it('prefers the GPU with the highest utilisation', () => {
    const summary = summarize(
      a5000At(1, { 1: { utilization_gpu: 37 } }),
      'busiest'
    );
    expect(summaryText(summary!, trans)).toBe(
      '2 GPUs · max 37 % · 16.8/24.0 GiB'
    );
  });

  it('sums the memory of all GPUs and averages their utilisation', () => {
    const summary = summarize(
      a5000At(1, { 1: { utilization_gpu: 37 } }),
      'sum'
    );
    expect(summary?.gpuIndex).toBeNull();
    expect(summaryText(summary!, trans)).toBe(
      '2 GPUs · mean 19 % · 38.8/48.0 GiB'
    );
    expect(summaryTitle(summary!, trans)).toMatch(/of all 2 GPUs/);
  });

  it('says MIG where MIG instances have no utilisation, n/a where it was not read, and has nothing without GPUs', () => {
    const mig = summarize(a100MigSnapshot(), 'sum');
    expect(summaryText(mig!, trans)).toBe('GPU 0 · MIG · 0.0/80.0 GiB');
    const unread = summarize(
      a5000At(1, {
        0: { utilization_gpu: null },
        1: { utilization_gpu: null }
      }),
      'busiest'
    );
    expect(summaryText(unread!, trans)).toBe('2 GPUs · n/a · 21.9/24.0 GiB');
    expect(summaryTitle(mig!, trans)).toMatch(/^GPU utilization and memory/);
    expect(summarize(driverNotLoadedSnapshot(), 'busiest')).toBeNull();
  });
});
