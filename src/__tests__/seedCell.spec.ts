import { NotebookModel } from '@jupyterlab/notebook';
import { Gettext, TranslationBundle } from '@jupyterlab/translation';
import { spawnSync } from 'child_process';

import { findSeedCells, upsertSeedCell } from '../seed/cell';
import { METADATA_KEY } from '../tokens';
import { Framework, FRAMEWORKS } from '../seed/frameworks';
import { frameworksOf, seedCellSource } from '../seed/generator';
import { probeOf, probeReplies } from './envPayloads';
import { trans } from './trans';

/**
 * Every set of frameworks, from none to all four.
 */
const COMBINATIONS: Framework[][] = Array.from(
  { length: 2 ** FRAMEWORKS.length },
  (_, bits) => FRAMEWORKS.filter((_, position) => bits & (1 << position))
);

/**
 * The statements each framework's part of the cell must have, in every mode.
 */
const SEEDING: { [F in Framework]: string[] } = {
  numpy: [
    'import numpy as np',
    'np.random.seed(SEED)',
    'rng = np.random.default_rng(SEED)'
  ],
  torch: [
    'import torch',
    'torch.manual_seed(SEED)',
    'torch.cuda.manual_seed_all(SEED)',
    'torch.backends.cudnn.deterministic = True',
    'torch.backends.cudnn.benchmark = False',
    'def seed_worker(worker_id):',
    'data_generator = torch.Generator().manual_seed(SEED)'
  ],
  tensorflow: [
    'import tensorflow as tf',
    'tf.keras.utils.set_random_seed(SEED)'
  ],
  jax: ['import jax', 'key = jax.random.PRNGKey(SEED)']
};

/**
 * What only strict mode adds, per framework.
 */
const STRICT: { [F in Framework]: string[] } = {
  numpy: [],
  torch: [
    'os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"',
    'torch.use_deterministic_algorithms(True)',
    'if _cuda_was_initialised:'
  ],
  tensorflow: ['tf.config.experimental.enable_op_determinism()'],
  jax: []
};

/**
 * The lines of a cell, without their indentation and trailing comments.
 */
function statements(source: string): string[] {
  return source
    .split('\n')
    .map(line => line.replace(/ {2}# .*$/, '').trim())
    .filter(Boolean);
}

describe('seedCellSource', () => {
  describe.each(
    COMBINATIONS.map(
      frameworks =>
        [frameworks.join(' + ') || 'random only', frameworks] as const
    )
  )('for %s', (_, frameworks) => {
    it.each([false, true])('seeds each framework, strict %p', strict => {
      const source = seedCellSource({ seed: 1234, strict, frameworks }, trans);
      const lines = statements(source);
      expect(lines).toContain('SEED = 1234');
      expect(lines).toContain(`STRICT = ${strict ? 'True' : 'False'}`);
      expect(lines).toContain('random.seed(SEED)');
      for (const framework of FRAMEWORKS) {
        const wanted = frameworks.includes(framework);
        for (const statement of SEEDING[framework]) {
          expect([statement, lines.includes(statement)]).toEqual([
            statement,
            wanted
          ]);
        }
        for (const statement of STRICT[framework]) {
          expect([statement, lines.includes(statement)]).toEqual([
            statement,
            wanted && strict
          ]);
        }
      }
    });

    it('prints its audit last, one line per framework', () => {
      const source = seedCellSource(
        { seed: 0, strict: false, frameworks },
        trans
      );
      const lines = statements(source);
      const audit = lines.slice(
        lines.findIndex(line => line.startsWith('print('))
      );
      expect(audit.every(line => !line.startsWith('import '))).toBe(true);
      expect(
        audit.filter(
          line => line.startsWith('print(f"  ') || line.startsWith('print("  ')
        )
      ).toHaveLength(
        2 + frameworks.length + (frameworks.includes('torch') ? 2 : 0)
      );
      expect(audit[audit.length - 1]).toContain('PYTHONHASHSEED');
    });
  });

  it('sets CUBLAS_WORKSPACE_CONFIG before torch can initialise CUDA', () => {
    const lines = statements(
      seedCellSource({ seed: 1, strict: true, frameworks: ['torch'] }, trans)
    );
    const set = lines.indexOf(
      'os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"'
    );
    const check = lines.findIndex(line =>
      line.startsWith('_cuda_was_initialised = ')
    );
    expect(check).toBeGreaterThan(-1);
    expect(check).toBeLessThan(set);
    expect(set).toBeLessThan(lines.indexOf('import torch'));
  });

  it('seeds numpy in DataLoader workers only when numpy is there', () => {
    const withNumpy = seedCellSource(
      {
        seed: 1,
        strict: false,
        frameworks: ['numpy', 'torch']
      },
      trans
    );
    const withoutNumpy = seedCellSource(
      {
        seed: 1,
        strict: false,
        frameworks: ['torch']
      },
      trans
    );
    expect(withNumpy).toContain('    np.random.seed(worker_seed)');
    expect(withoutNumpy).not.toContain('np.');
  });

  it.each([-1, 2 ** 32, 1.5, NaN])('refuses the seed %p', seed => {
    expect(() =>
      seedCellSource({ seed, strict: false, frameworks: [] }, trans)
    ).toThrow(RangeError);
  });
});

describe('seedCellSource in another language', () => {
  /**
   * A bundle whose every translation has quotes, braces, a backslash and
   * Chinese in it: what a translation may hold, that the cell must escape.
   */
  const awkward = {
    ...trans,
    __: (msgid: string, ...args: unknown[]) =>
      Gettext.strfmt(`「${msgid}」 "引号" {花括号} \\ '单引号'`, ...args)
  } as TranslationBundle;

  it.each([false, true])(
    'writes its comments and audit in it, as valid Python (strict %p)',
    strict => {
      const source = seedCellSource(
        { seed: 7, strict, frameworks: [...FRAMEWORKS] },
        awkward
      );
      expect(source).toContain(
        '# 「Reproducibility cell (jupyterlab-gpu-monitor)'
      );
      expect(source).toContain('「Reproducibility: seed {SEED}」');
      const parsed = spawnSync(
        'python3',
        ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'],
        { input: source, encoding: 'utf-8' }
      );
      expect(parsed.stderr).toBe('');
      expect(parsed.status).toBe(0);
    }
  );

  it('prints what it set in that language', () => {
    const source = seedCellSource(
      { seed: 7, strict: false, frameworks: [] },
      awkward
    );
    const run = spawnSync('python3', ['-c', source], { encoding: 'utf-8' });
    expect(run.stdout.split('\n')[0]).toBe(
      '「Reproducibility: seed 7」 "引号" {花括号} \\ \'单引号\''
    );
  });
});

describe('frameworksOf', () => {
  it('takes the frameworks the kernel has installed', () => {
    expect(frameworksOf(probeOf(probeReplies.torchCpu()).packages)).toEqual([
      'numpy',
      'torch'
    ]);
    expect(frameworksOf(probeOf(probeReplies.plain()).packages)).toEqual([]);
  });

  it('adds those the settings include always, in the cell order', () => {
    expect(
      frameworksOf(probeOf(probeReplies.plain()).packages, ['jax', 'numpy'])
    ).toEqual(['numpy', 'jax']);
  });
});

describe('upsertSeedCell', () => {
  let notebook: NotebookModel;

  beforeEach(() => {
    notebook = new NotebookModel();
    notebook.sharedModel.insertCells(0, [
      { cell_type: 'markdown', source: '# Training' },
      { cell_type: 'code', source: 'model.fit()' }
    ]);
  });

  afterEach(() => {
    notebook.dispose();
  });

  const sources = () =>
    Array.from({ length: notebook.cells.length }, (_, index) =>
      notebook.cells.get(index).sharedModel.getSource()
    );

  it('inserts the cell at the top, marked in its metadata', () => {
    const record = { seed: 42, strict: false, frameworks: ['numpy' as const] };
    expect(upsertSeedCell(notebook, 'SEED = 42', record)).toEqual({
      index: 0,
      replaced: false
    });
    expect(sources()).toEqual(['SEED = 42', '# Training', 'model.fit()']);
    expect(notebook.cells.get(0).type).toBe('code');
    expect(notebook.cells.get(0).getMetadata(METADATA_KEY)).toEqual({
      reproducibility: record
    });
  });

  it('replaces the cell where it is when inserted again, with its outputs', () => {
    const record = { seed: 42, strict: false, frameworks: [] };
    upsertSeedCell(notebook, 'SEED = 42', record);
    notebook.sharedModel.moveCell(0, 1);
    const cell = notebook.cells.get(1);
    cell.setMetadata('tags', ['setup']);
    (cell.sharedModel as any).setOutputs([
      {
        output_type: 'stream',
        name: 'stdout',
        text: 'Reproducibility: seed 42\n'
      }
    ]);

    const result = upsertSeedCell(notebook, 'SEED = 7', { ...record, seed: 7 });

    expect(result).toEqual({ index: 1, replaced: true });
    expect(sources()).toEqual(['# Training', 'SEED = 7', 'model.fit()']);
    expect(findSeedCells(notebook)).toEqual([1]);
    const replaced = notebook.cells.get(1);
    expect(replaced.getMetadata('tags')).toEqual(['setup']);
    expect(replaced.getMetadata(METADATA_KEY)).toEqual({
      reproducibility: { ...record, seed: 7 }
    });
    expect((replaced.sharedModel as any).getOutputs()).toEqual([]);
  });

  it('keeps one cell when a copy was pasted', () => {
    const record = { seed: 42, strict: true, frameworks: [] };
    upsertSeedCell(notebook, 'SEED = 42', record);
    const pasted = notebook.cells.get(0).sharedModel.toJSON();
    notebook.sharedModel.insertCell(3, pasted as any);
    expect(findSeedCells(notebook)).toEqual([0, 3]);

    upsertSeedCell(notebook, 'SEED = 42', record);

    expect(findSeedCells(notebook)).toEqual([0]);
    expect(notebook.cells.length).toBe(3);
  });

  it('does not take a markdown cell with the metadata for it', () => {
    notebook.cells
      .get(0)
      .setMetadata(METADATA_KEY, { reproducibility: { seed: 1 } });
    expect(findSeedCells(notebook)).toEqual([]);
  });
});
