/**
 * @jest-environment node
 */

import {
  checkFit,
  fitText,
  fitWarning,
  gpusVisibleTo,
  needText
} from '../cells/fit';
import {
  cellLineDetails,
  cellLineText,
  lowUtilization,
  lowUtilizationHint,
  runBands
} from '../cells/format';
import { recordedNeed, writeLastRuns } from '../cells/notebookRecords';
import { NotebookGpuRuns } from '../cells/notebookRuns';
import { lastRunRecord, notebookNeed, readLastRun } from '../cells/record';
import { ICellRun, INotebookGpuNeed, METADATA_KEY } from '../tokens';
import { ISpanFigures } from '../restapi/kernels';
import {
  a5000KernelSnapshot,
  a5000Kernels,
  a5000KernelSpans,
  a5000Snapshot,
  t4KernelSnapshot,
  t4KernelSpans
} from './payloads';
import { trans } from './trans';

/**
 * The recorded spans of `train.ipynb`'s kernel: too short; taking its
 * memory on both A5000; across a gap, then taking it again; holding none;
 * holding its memory and adding none, the GPUs idle.
 */
const [TOO_SHORT, TAKING, ACROSS_GAP, HOLDING_NONE, HOLDING] =
  a5000KernelSpans().spans;

/**
 * Its 6 s on the Tesla T4, taking 1005 MiB while a cell kept its CPU busy.
 */
const [ON_T4] = t4KernelSpans().spans;

/**
 * A run of a cell over a recorded span.
 */
function runOver(
  figures: ISpanFigures,
  cellId = 'cell-train',
  executionCount: number | null = 7
): ICellRun {
  return {
    cellId,
    executionCount,
    firstLine: 'model.fit(train_loader, epochs=3)',
    start: figures.start,
    end: figures.end,
    figures
  };
}

/**
 * A cell model with the metadata records need.
 */
function cell(
  id: string,
  metadata: Record<string, unknown> = {},
  type = 'code'
) {
  const store = { ...metadata };
  return {
    id,
    type,
    metadata: store,
    getMetadata: (key: string) => store[key],
    setMetadata: jest.fn((key: string, value: unknown) => {
      store[key] = value;
    })
  };
}

describe('the line under a cell', () => {
  it('gives each GPU its own peak memory and mean utilisation, not their sum or average, and the duration', () => {
    expect(cellLineText(runOver(TAKING), false, trans)).toBe(
      'GPU 0: peak 21.9 GiB (+21.9 GiB), 0 % avg · GPU 1: peak 16.8 GiB (+16.8 GiB), 0 % avg · 6.0 s'
    );
    expect(cellLineText(runOver(ON_T4), true, trans)).toBe(
      'GPU 0 · peak 1005 MiB (+1005 MiB) · 0 % avg · 6.0 s'
    );
    expect(cellLineDetails(TAKING, trans)).toBe(
      'GPU 0 (NVIDIA RTX A5000): 0 MiB at the start, peak 21.9 GiB, 0 % avg, 0 % max\nGPU 1 (NVIDIA RTX A5000): 0 MiB at the start, peak 16.8 GiB, 0 % avg, 0 % max\nKernel CPU: 0 % avg (100 % is one core)'
    );
  });

  it('says what a run added beside what the kernel held, not the same peak under every cell', () => {
    // A cell that trains on the model loaded before it: the GPUs busy, the
    // memory the kernel held as it started, 2 GiB more on GPU 0.
    const training = {
      ...HOLDING,
      gpus: [
        {
          ...HOLDING.gpus[0],
          peak_memory_mib: HOLDING.gpus[0].peak_memory_mib + 2048,
          mean_utilization: 87,
          peak_utilization: 99
        },
        { ...HOLDING.gpus[1], mean_utilization: 12, peak_utilization: 40 }
      ]
    };
    expect(cellLineText(runOver(training), false, trans)).toBe(
      'GPU 0: peak 23.9 GiB (+2.0 GiB), 87 % avg · GPU 1: held 16.8 GiB, 12 % avg · 3.0 s'
    );
    expect(cellLineDetails(training, trans)).toBe(
      'GPU 0 (NVIDIA RTX A5000): 21.9 GiB at the start, peak 23.9 GiB, 87 % avg, 99 % max\nGPU 1 (NVIDIA RTX A5000): 16.8 GiB at the start, peak 16.8 GiB, 12 % avg, 40 % max\nKernel CPU: 0 % avg (100 % is one core)'
    );
    // Tens of MiB are CUDA's libraries, not the cell's memory.
    const workspace = {
      ...training,
      gpus: [{ ...training.gpus[1], peak_memory_mib: 17246 + 40 }]
    };
    expect(cellLineText(runOver(workspace), false, trans)).toBe(
      'GPU 1 · held 16.9 GiB · 12 % avg · 3.0 s'
    );
  });

  it('says nothing for a run that held the memory of a loaded model while the GPUs idled', () => {
    // A plot, a print, a file read after the model was loaded.
    expect(cellLineText(runOver(HOLDING), true, trans)).toBeNull();
    expect(lowUtilization(HOLDING, 30)).toBe(false);
  });

  it('says a run shorter than two reads is too short only when such runs are shown', () => {
    expect(cellLineText(runOver(TOO_SHORT), true, trans)).toBe(
      'GPU · too short to measure (0.8 s)'
    );
    expect(cellLineText(runOver(TOO_SHORT), false, trans)).toBeNull();
  });

  it('says nothing for a run that held no GPU memory, or has no figures yet', () => {
    expect(cellLineText(runOver(HOLDING_NONE), true, trans)).toBeNull();
    expect(
      cellLineText({ ...runOver(TAKING), figures: null }, true, trans)
    ).toBeNull();
  });

  it('says when the server did not read the GPUs during part of the run', () => {
    expect(cellLineText(runOver(ACROSS_GAP), true, trans)).toBe(
      'GPU 0: peak 21.9 GiB (+21.9 GiB), 0 % avg · GPU 1: peak 16.8 GiB (+16.8 GiB), 0 % avg · 13 s · readings missing for part of it'
    );
  });

  it('hints at data loading when the GPU worked in bursts but idled on the whole', () => {
    // The recorded runs took their memory while the GPUs computed nothing:
    // loading a model, which starves of nothing.
    expect(lowUtilization(TAKING, 30)).toBe(false);
    expect(lowUtilization(ON_T4, 30)).toBe(false);
    // The same runs training in bursts: busy reads between idle ones.
    const bursts = (figures: ISpanFigures, peak: number, mean: number) => ({
      ...figures,
      gpus: figures.gpus.map(gpu => ({
        ...gpu,
        peak_utilization: peak,
        mean_utilization: mean
      }))
    });
    const starving = bursts(TAKING, 85, 12);
    expect(lowUtilization(starving, 30)).toBe(true);
    expect(lowUtilization(bursts(ON_T4, 60, 8), 30)).toBe(true);
    expect(lowUtilization(starving, 0)).toBe(false);
    expect(lowUtilization(TOO_SHORT, 30)).toBe(false);
    expect(lowUtilization(HOLDING_NONE, 30)).toBe(false);
    expect(lowUtilization({ ...starving, samples: 4 }, 30)).toBe(false);
    // A few percent is torch starting up, not work.
    expect(lowUtilization(bursts(TAKING, 4, 1), 30)).toBe(false);
    // GPU 1 busy at 90 % while GPU 0 idles: the cell's GPUs did not starve
    // (the old mean over both, 45 %, hid which was which).
    const oneBusy = {
      ...starving,
      gpus: [starving.gpus[0], { ...starving.gpus[1], mean_utilization: 90 }]
    };
    expect(lowUtilization(oneBusy, 50)).toBe(false);
    // A GPU the cell held next to nothing on does not count.
    const barelyHeld = {
      ...starving,
      gpus: [
        starving.gpus[0],
        { ...starving.gpus[1], peak_memory_mib: 2, mean_utilization: 90 }
      ]
    };
    expect(lowUtilization(barelyHeld, 30)).toBe(true);
  });

  it("says why the GPU waited: the kernel's CPU busy preparing data, or idle too", () => {
    // On the T4 a cell kept the kernel's CPU busy; on the A5000 it idled.
    expect(lowUtilizationHint(ON_T4, 30, trans)).toMatch(
      /^GPU under 30 % while the kernel's CPU was busy \(\d+ % of a core\): preparing data holds it back; try DataLoader num_workers/
    );
    expect(lowUtilizationHint(TAKING, 30, trans)).toBe(
      "GPU under 30 % while the kernel's CPU idled too (0 %): the cell waited on something else, such as files, the network or another process."
    );
    // Neither busy nor idle, or not measured: what to try, without a why.
    for (const cpu of [25, null]) {
      expect(
        lowUtilizationHint({ ...TAKING, mean_cpu_percent: cpu }, 30, trans)
      ).toBe(
        'GPU under 30 % while this cell held memory: try DataLoader num_workers, pin_memory, prefetching.'
      );
    }
    expect(cellLineDetails(ON_T4, trans)).toMatch(
      /\nKernel CPU: \d+ % avg \(100 % is one core\)$/
    );
  });

  it('names the bands of the charts after the execution count and first line', () => {
    const long = {
      ...runOver(TAKING, 'cell-long', null),
      firstLine: `loss = ${'criterion(model(x), y) + '.repeat(4)}0`
    };

    expect(runBands([runOver(TAKING), long])).toEqual([
      {
        key: 'cell-train',
        start: TAKING.start,
        end: TAKING.end,
        label: '[7] model.fit(train_loader, epochs=3)'
      },
      {
        key: 'cell-long',
        start: TAKING.start,
        end: TAKING.end,
        label:
          '[ ] loss = criterion(model(x), y) + criterion(model(x), y) + cr…'
      }
    ]);
  });
});

describe('the record a cell keeps of its last run', () => {
  it('keeps the peak, mean utilisation, duration, GPU and date of a measured run', () => {
    expect(lastRunRecord(runOver(TAKING))).toEqual({
      peak_memory_mib: 39676,
      mean_utilization: 0,
      duration_seconds: 6,
      gpu_name: 'NVIDIA RTX A5000',
      gpu_count: 2,
      // GPU 0 held more than GPU 1: an even split would hide it.
      peak_memory_mib_per_gpu: [22430, 17246],
      date: new Date(TAKING.end * 1000).toISOString()
    });
  });

  it('keeps nothing of a run too short to measure or that held no GPU memory', () => {
    expect(lastRunRecord(runOver(TOO_SHORT))).toBeNull();
    expect(lastRunRecord(runOver(HOLDING_NONE))).toBeNull();
    expect(lastRunRecord({ ...runOver(TAKING), figures: null })).toBeNull();
  });

  it('reads back what it wrote, and nothing from a record someone broke', () => {
    const record = lastRunRecord(runOver(ON_T4))!;

    expect(readLastRun({ last_run: record })).toEqual(record);
    expect(
      readLastRun(JSON.parse(JSON.stringify({ last_run: record })))
    ).toEqual(record);
    for (const broken of [
      null,
      'last_run',
      { last_run: { ...record, peak_memory_mib: '1005' } },
      { last_run: { ...record, peak_memory_mib: -1 } },
      { last_run: { ...record, gpu_count: 1.5 } },
      { last_run: { ...record, date: undefined } },
      { last_run: [record] }
    ]) {
      expect(readLastRun(broken)).toBeNull();
    }
    // A broken list of peaks is dropped, the record kept; an older record,
    // without it, reads as before.
    const { peak_memory_mib_per_gpu, ...older } = record;
    expect(peak_memory_mib_per_gpu).toEqual([1005]);
    expect(
      readLastRun({
        last_run: { ...record, peak_memory_mib_per_gpu: [1005, 7] }
      })
    ).toEqual(older);
    expect(readLastRun({ last_run: older })).toEqual(older);
  });

  it('writes the last measured run of each code cell on save, keeping other keys, and only what changed', () => {
    const runs = new NotebookGpuRuns({ path: 'train.ipynb' });
    const trained = runs.add(runOver(TAKING, 'cell-train'));
    runs.setFigures(trained, TAKING);
    const short = runs.add(runOver(TOO_SHORT, 'cell-short'));
    runs.setFigures(short, TOO_SHORT);
    const old = lastRunRecord(runOver(ON_T4))!;
    const fresh = runs.add(runOver(ON_T4, 'cell-fresh'));
    runs.setFigures(fresh, ON_T4);
    const cells = [
      cell('cell-train', { [METADATA_KEY]: { note: 'kept' } }),
      cell('cell-short', { [METADATA_KEY]: { last_run: old } }),
      cell('cell-fresh'),
      cell('cell-markdown', {}, 'markdown')
    ];

    expect(writeLastRuns(cells, runs)).toBe(2);
    expect(writeLastRuns(cells, runs)).toBe(0);

    expect(cells[0].metadata[METADATA_KEY]).toEqual({
      note: 'kept',
      last_run: lastRunRecord(runOver(TAKING))
    });
    expect(cells[2].metadata[METADATA_KEY]).toEqual({
      last_run: lastRunRecord(runOver(ON_T4))
    });
    // Too short to measure: the record of the run before stays.
    expect(cells[1].metadata[METADATA_KEY]).toEqual({ last_run: old });
    expect(cells[1].setMetadata).not.toHaveBeenCalled();
  });

  it("makes the notebook's need the record that needed the most on one GPU", () => {
    const onT4 = lastRunRecord(runOver(ON_T4))!;
    const onA5000s = lastRunRecord(runOver(TAKING))!;
    const cells = [
      cell('a', { [METADATA_KEY]: { last_run: onT4 } }),
      cell('b', { [METADATA_KEY]: { last_run: onA5000s } }),
      cell('c', { [METADATA_KEY]: { last_run: 'broken' } })
    ];

    expect(recordedNeed(cells)).toEqual({
      peakMemoryMiB: 39676,
      gpuCount: 2,
      perGpuMiB: [22430, 17246],
      gpuName: 'NVIDIA RTX A5000',
      date: onA5000s.date
    });
    expect(notebookNeed([onT4])?.peakMemoryMiB).toBe(1005);
    expect(recordedNeed([cell('d')])).toBeNull();
    // A record written before the peaks were kept: split evenly.
    const { peak_memory_mib_per_gpu: _, ...older } = onA5000s;
    expect(notebookNeed([older])?.perGpuMiB).toEqual([19838, 19838]);
  });
});

describe('the fit check', () => {
  /**
   * What `train.ipynb` needed on the two A5000, and on the T4.
   */
  const ON_TWO_A5000: INotebookGpuNeed = notebookNeed([
    lastRunRecord(runOver(TAKING))!
  ])!;
  const ON_ONE_T4: INotebookGpuNeed = notebookNeed([
    lastRunRecord(runOver(ON_T4))!
  ])!;
  const [trainKernel, idleKernel] = a5000Kernels();

  it('warns when the GPUs it would use lack the memory, and no GPU has it', () => {
    const fit = checkFit(ON_TWO_A5000, a5000Snapshot(), null, null)!;

    expect(fit).toEqual({
      perGpuMiB: [22430, 17246],
      chosen: [0, 1],
      fits: false,
      short: { index: 0, freeMiB: 1678 },
      suggestion: null
    });
    expect(needText(ON_TWO_A5000, trans)).toBe(
      'needed 38.7 GiB at its peak on 2 × NVIDIA RTX A5000'
    );
    expect(fitText(fit, trans)).toBe(
      'GPU 0 has only 1.6 GiB free. No GPU has that much free now.'
    );
    expect(
      fitWarning('experiments/train.ipynb', ON_TWO_A5000, fit, trans)
    ).toBe(
      'train.ipynb needed 21.9 GiB, 16.8 GiB on its 2 GPUs at its peak; GPU 0 has only 1.6 GiB free. No GPU has that much free now.'
    );
  });

  it("counts the memory the notebook's own kernel still holds as its own", () => {
    const snapshot = a5000KernelSnapshot();

    const own = checkFit(ON_TWO_A5000, snapshot, null, trainKernel.kernel_id)!;
    const another = checkFit(
      ON_TWO_A5000,
      snapshot,
      null,
      idleKernel.kernel_id
    )!;

    expect(own.fits).toBe(true);
    expect(fitText(own, trans)).toBe('It fits on GPUs 0, 1.');
    expect(another.fits).toBe(false);
  });

  it('checks the GPUs the kernel sees, and suggests the one with the most room', () => {
    const snapshot = a5000Snapshot();

    const onGpu1 = checkFit(ON_ONE_T4, snapshot, [1], null)!;
    const hidden = checkFit(ON_ONE_T4, snapshot, [], null)!;

    expect(onGpu1).toMatchObject({ chosen: [1], fits: true });
    expect(hidden).toMatchObject({
      chosen: [],
      fits: false,
      short: null,
      suggestion: [1]
    });
    expect(fitText(hidden, trans)).toBe(
      'Its kernel sees 0 GPUs. GPU 1 has room.'
    );
  });

  it("takes the GPUs the inspector says the notebook's kernel sees, not another notebook's", () => {
    const seen = { label: 'train.ipynb', indices: [1] };

    expect(gpusVisibleTo('work/train.ipynb', seen)).toEqual([1]);
    expect(gpusVisibleTo('work/eval.ipynb', seen)).toBeNull();
    expect(gpusVisibleTo('work/train.ipynb', null)).toBeNull();
  });

  it('says a notebook that needed two GPUs does not fit on one', () => {
    const fit = checkFit(ON_TWO_A5000, t4KernelSnapshot(), null, null)!;

    expect(fit).toMatchObject({ chosen: [0], fits: false, suggestion: null });
    expect(fitText(fit, trans)).toBe(
      'Its kernel sees 1 GPU. No GPU has that much free now.'
    );
  });

  it('checks nothing against a server that reads no GPU', () => {
    expect(
      checkFit(ON_ONE_T4, { ...a5000Snapshot(), gpus: [] }, null, null)
    ).toBeNull();
  });

  it('keeps the warning within 140 characters, however long the name', () => {
    const fit = checkFit(ON_TWO_A5000, a5000Snapshot(), null, null)!;
    const path = `${'a-very-long-experiment-name-'.repeat(8)}final.ipynb`;

    const warning = fitWarning(path, ON_TWO_A5000, fit, trans);

    expect(warning.length).toBeLessThanOrEqual(140);
    expect(warning).toMatch(
      /^a-very-lo.*….*final\.ipynb needed 21\.9 GiB, 16\.8 GiB/
    );
  });
});
