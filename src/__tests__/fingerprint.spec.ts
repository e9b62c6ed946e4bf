import { NotebookModel } from '@jupyterlab/notebook';

import { environmentOfPrefix } from '../env/catalog';
import {
  diffFingerprint,
  driftFindings,
  makeFingerprint
} from '../env/fingerprint';
import {
  parseFingerprint,
  readFingerprint,
  writeFingerprint
} from '../env/fingerprintRecord';
import { IEnvironmentFingerprint, METADATA_KEY } from '../tokens';
import {
  diagnoses,
  environmentList,
  probeOf,
  probeReplies
} from './envPayloads';
import { a100MigSnapshot, a5000Snapshot } from './payloads';
import { trans } from './trans';

/**
 * The fingerprint of the recorded torch-cpu kernel next to the two A5000s.
 */
function torchCpuFingerprint(): IEnvironmentFingerprint {
  const probe = probeOf(probeReplies.torchCpu());
  return makeFingerprint({
    probe,
    environment: environmentOfPrefix(
      environmentList().environments,
      probe.prefix
    ),
    snapshot: a5000Snapshot(),
    torchCuda: diagnoses.torchCpuProbe().torch_cuda,
    now: new Date('2026-11-30T05:00:00Z')
  });
}

describe('makeFingerprint', () => {
  it("records the environment, Python, key packages, torch's build and the GPUs", () => {
    const fingerprint = torchCpuFingerprint();
    expect(fingerprint).toEqual({
      recorded: '2026-11-30T05:00:00.000Z',
      environment: {
        name: 'torch-cpu',
        prefix: expect.stringMatching(/\.kernel-envs\/torch-cpu$/),
        kind: 'venv'
      },
      python: { version: '3.11.7', implementation: 'CPython' },
      packages: expect.objectContaining({
        torch: '2.13.0+cpu',
        numpy: '2.4.6',
        tensorflow: null
      }),
      torch_cuda: 'cpu',
      gpus: {
        driver_version: '590.44.01',
        cuda_version: '13.1',
        names: ['NVIDIA RTX A5000', 'NVIDIA RTX A5000']
      }
    });
  });

  it('records only the GPUs the kernel can see, and none when there are none', () => {
    const probe = probeOf(probeReplies.torchCpuVisibleDevices());
    const now = new Date();
    const visible = makeFingerprint({
      probe,
      environment: null,
      snapshot: a5000Snapshot(),
      torchCuda: 'cpu',
      now
    });
    expect(visible.gpus?.names).toEqual(['NVIDIA RTX A5000']);
    // Without a listing, the folder names the environment.
    expect(visible.environment).toMatchObject({
      name: 'torch-cpu',
      kind: null
    });

    expect(
      makeFingerprint({
        probe,
        environment: null,
        snapshot: null,
        torchCuda: 'cpu',
        now
      }).gpus
    ).toBeNull();
  });
});

describe('diffFingerprint', () => {
  it('finds no change between a kernel and its own fingerprint', () => {
    expect(
      diffFingerprint(torchCpuFingerprint(), torchCpuFingerprint())
    ).toEqual([]);
  });

  it('tells each package, Python, build, GPU model and driver that changed', () => {
    const recorded = torchCpuFingerprint();
    const current = torchCpuFingerprint();
    current.python.version = '3.12.1';
    current.packages = {
      ...current.packages,
      numpy: '2.3.5',
      pandas: '2.2.3',
      scipy: '1.14.0'
    };
    current.torch_cuda = '12.4';
    const a100 = a100MigSnapshot();
    current.gpus = {
      driver_version: a100.driver_version,
      cuda_version: a100.cuda_version,
      names: [a100.gpus[0].name!]
    };

    expect(diffFingerprint(recorded, current)).toEqual([
      { kind: 'python', recorded: 'CPython 3.11.7', current: 'CPython 3.12.1' },
      { kind: 'package', name: 'numpy', recorded: '2.4.6', current: '2.3.5' },
      { kind: 'package', name: 'pandas', recorded: null, current: '2.2.3' },
      { kind: 'torch-cuda', recorded: 'cpu', current: '12.4' },
      {
        kind: 'gpus',
        recorded: 'NVIDIA RTX A5000, NVIDIA RTX A5000',
        current: 'NVIDIA A100-SXM4-80GB'
      },
      {
        kind: 'driver',
        recorded: '590.44.01 (CUDA 13.1)',
        current: '535.54.03 (CUDA 12.2)'
      }
    ]);
  });

  it('compares nothing that one side does not know', () => {
    const recorded = torchCpuFingerprint();
    const current = { ...torchCpuFingerprint(), gpus: null, torch_cuda: null };
    const { numpy, ...withoutNumpy } = current.packages;
    current.packages = withoutNumpy;
    expect(numpy).toBe('2.4.6');
    expect(diffFingerprint(recorded, current)).toEqual([]);
  });
});

describe('driftFindings', () => {
  const recorded = torchCpuFingerprint();
  // The kernel's environment now: a venv, or a conda environment.
  const VENV = '/home/ana/venvs/train';
  const CONDA_ENV = '/opt/conda/envs/train';
  const date = new Intl.DateTimeFormat('en', { dateStyle: 'medium' }).format(
    new Date(recorded.recorded)
  );

  it('tells what changed since when, with the command that pins it back', () => {
    const [numpy, torch] = driftFindings(
      [
        { kind: 'package', name: 'numpy', recorded: '2.4.6', current: '2.3.5' },
        { kind: 'torch-cuda', recorded: 'cpu', current: '12.4' }
      ],
      recorded,
      trans,
      new Set(),
      VENV
    );
    expect(numpy).toEqual({
      id: 'drift-package-numpy',
      severity: 'warning',
      title: 'numpy 2.4.6 → 2.3.5 since the fingerprint',
      evidence: `The notebook recorded numpy 2.4.6 on ${date}; the kernel has 2.3.5.`,
      fix: '"/home/ana/venvs/train/bin/python" -m pip install "numpy==2.4.6"',
      restart: true
    });
    expect(torch.fix).toBe(
      '"/home/ana/venvs/train/bin/python" -m pip install "torch==2.13.0+cpu" --index-url https://download.pytorch.org/whl/cpu'
    );
  });

  it('pins with uv aimed at the Python of a venv uv made, which has no pip', () => {
    const [numpy, torch, gone] = driftFindings(
      [
        { kind: 'package', name: 'numpy', recorded: '2.4.6', current: '2.3.5' },
        {
          kind: 'package',
          name: 'torch',
          recorded: '2.13.0+cpu',
          current: '2.13.0+cu130'
        },
        { kind: 'package', name: 'pandas', recorded: null, current: '3.0.1' }
      ],
      recorded,
      trans,
      new Set(),
      '/srv/train/.venv',
      'uv'
    );
    expect(numpy.fix).toBe(
      'uv pip install --python "/srv/train/.venv/bin/python" "numpy==2.4.6"'
    );
    expect(torch.fix).toBe(
      'uv pip install --python "/srv/train/.venv/bin/python" "torch==2.13.0+cpu" --index-url https://download.pytorch.org/whl/cpu'
    );
    expect(gone.fix).toBe(
      'uv pip uninstall --python "/srv/train/.venv/bin/python" pandas'
    );
  });

  it("names a Windows environment's python.exe", () => {
    const [numpy] = driftFindings(
      [{ kind: 'package', name: 'numpy', recorded: '2.4.6', current: '2.3.5' }],
      recorded,
      trans,
      new Set(),
      'C:\\Users\\ana\\miniconda3\\envs\\train\\'
    );
    expect(numpy.fix).toBe(
      '"C:\\Users\\ana\\miniconda3\\envs\\train\\python.exe" -m pip install "numpy==2.4.6"'
    );
  });

  it("writes the date as the interface's language does", () => {
    document.documentElement.lang = 'zh-CN';
    try {
      const [python] = driftFindings(
        [
          {
            kind: 'python',
            recorded: 'CPython 3.11.7',
            current: 'CPython 3.12.1'
          }
        ],
        recorded,
        trans,
        new Set(),
        VENV
      );
      expect(python.evidence).toMatch(/ on 2026年11月\d+日;/);
    } finally {
      document.documentElement.lang = '';
    }
  });

  it('pins with conda what conda installed, and removes what was not there', () => {
    const [numpy, pandas, python] = driftFindings(
      [
        { kind: 'package', name: 'numpy', recorded: '2.4.6', current: '2.3.5' },
        { kind: 'package', name: 'pandas', recorded: null, current: '2.2.3' },
        {
          kind: 'python',
          recorded: 'CPython 3.11.7',
          current: 'CPython 3.12.1'
        }
      ],
      recorded,
      trans,
      new Set(['numpy', 'pandas', 'python']),
      CONDA_ENV
    );
    // Aimed at the kernel's environment, not the one a terminal has active.
    expect(numpy.fix).toBe(
      'conda install -p "/opt/conda/envs/train" "numpy=2.4.6"'
    );
    expect(pandas.title).toBe(
      'pandas not installed → 2.2.3 since the fingerprint'
    );
    expect(pandas.fix).toBe('conda remove -p "/opt/conda/envs/train" pandas');
    expect(python.fix).toBe(
      'conda install -p "/opt/conda/envs/train" "python=3.11.7"'
    );
  });

  it('has nothing to run for other GPUs or another driver', () => {
    const findings = driftFindings(
      [
        { kind: 'gpus', recorded: 'NVIDIA RTX A5000', current: 'NVIDIA A100' },
        {
          kind: 'driver',
          recorded: '590.44.01 (CUDA 13.1)',
          current: '535.54.03 (CUDA 12.2)'
        }
      ],
      recorded,
      trans,
      new Set(),
      VENV
    );
    expect(findings.map(f => [f.severity, f.fix])).toEqual([
      ['warning', ''],
      ['info', '']
    ]);
  });
});

describe('the fingerprint in notebook metadata', () => {
  it('is written under gpu_monitor.environment, keeping other records', () => {
    const notebook = new NotebookModel();
    notebook.setMetadata(METADATA_KEY, { other: 1 });
    expect(readFingerprint(notebook)).toBeNull();

    const fingerprint = torchCpuFingerprint();
    writeFingerprint(notebook, fingerprint);

    expect(notebook.getMetadata(METADATA_KEY)).toEqual({
      other: 1,
      environment: fingerprint
    });
    expect(readFingerprint(notebook)).toEqual(fingerprint);
    notebook.dispose();
  });

  it('is ignored when it is not a fingerprint', () => {
    expect(parseFingerprint({ recorded: 'yesterday' })).toBeNull();
    expect(parseFingerprint('fingerprint')).toBeNull();
    const { gpus, torch_cuda, ...older } = torchCpuFingerprint();
    expect(gpus).not.toBeNull();
    expect(torch_cuda).toBe('cpu');
    expect(parseFingerprint(older)).toEqual({
      ...older,
      gpus: null,
      torch_cuda: null
    });
  });
});
