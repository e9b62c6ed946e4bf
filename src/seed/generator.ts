/**
 * The reproducibility cell: Python that seeds every random number generator
 * the kernel's frameworks have and turns on their deterministic switches.
 *
 * The cell is code kept in the notebook, read by whoever reruns it: its
 * comments and printed audit are in English whatever the author's language,
 * like the code around them.
 */

/**
 * A framework the cell seeds, besides Python's `random`.
 */
export type Framework = 'numpy' | 'torch' | 'tensorflow' | 'jax';

/**
 * Every framework, in the order the cell seeds them.
 */
export const FRAMEWORKS: readonly Framework[] = [
  'numpy',
  'torch',
  'tensorflow',
  'jax'
];

/**
 * What the cell is made for.
 */
export interface ISeedCellOptions {
  /**
   * The seed, an integer from 0 to 2**32 - 1 (numpy's range).
   */
  seed: number;
  /**
   * Whether to turn on the switches that make results bit-for-bit
   * repeatable at a cost in speed: deterministic algorithms only in torch
   * (which raises on an op that has none), op determinism in TensorFlow.
   */
  strict: boolean;
  /**
   * The frameworks to seed.
   */
  frameworks: readonly Framework[];
}

/**
 * The frameworks installed in the kernel, by the distributions' versions
 * the probe reported, and those to include always.
 */
export function frameworksOf(
  packages: { readonly [name: string]: string | null },
  always: readonly Framework[] = []
): Framework[] {
  return FRAMEWORKS.filter(
    framework => always.includes(framework) || !!packages[framework]
  );
}

/**
 * The source of the reproducibility cell.
 *
 * @throws {RangeError} when the seed is not an integer numpy accepts
 */
export function seedCellSource(options: ISeedCellOptions): string {
  const { seed, strict } = options;
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
    throw new RangeError(
      `The seed must be an integer from 0 to 2**32 - 1, not ${seed}`
    );
  }
  const has = (framework: Framework) => options.frameworks.includes(framework);
  const sections: string[][] = [Private.header(seed, strict)];
  if (strict && has('torch')) {
    sections.push(Private.CUBLAS);
  }
  sections.push(['random.seed(SEED)']);
  if (has('numpy')) {
    sections.push(Private.NUMPY);
  }
  if (has('torch')) {
    sections.push(Private.torch(strict, has('numpy')));
  }
  if (has('tensorflow')) {
    sections.push(Private.tensorflow(strict));
  }
  if (has('jax')) {
    sections.push(Private.JAX);
  }
  sections.push(Private.audit(options));
  return sections.map(lines => lines.join('\n')).join('\n\n') + '\n';
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The value cuBLAS needs for deterministic results (CUDA >= 10.2).
   */
  const CUBLAS_CONFIG = ':4096:8';

  /**
   * The comment, the imports and the seed.
   */
  export function header(seed: number, strict: boolean): string[] {
    return [
      '# Reproducibility cell (jupyterlab-gpu-monitor): run it first. Inserting it again',
      '# replaces it. It seeds every random number generator below and prints what it set.',
      'import os',
      'import random',
      'import sys',
      '',
      `SEED = ${seed}`,
      `STRICT = ${strict ? 'True' : 'False'}`,
      '',
      "# PYTHONHASHSEED only works when Python starts: set it in the kernelspec's env to make",
      '# str hashes (and the order of sets of str) repeat from run to run.'
    ];
  }

  /**
   * Strict torch: cuBLAS reads its workspace setting when CUDA initialises,
   * so it is set before; a kernel that made its CUDA context already needs a
   * restart for it to apply.
   */
  export const CUBLAS = [
    '# cuBLAS reads this once, when CUDA initialises: it must be set before.',
    `_cuda_was_initialised = "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized() and os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in (":4096:8", ":16:8")`,
    `os.environ["CUBLAS_WORKSPACE_CONFIG"] = "${CUBLAS_CONFIG}"`
  ];

  /**
   * numpy: the legacy global generator, and a Generator to pass around.
   */
  export const NUMPY = [
    'import numpy as np',
    '',
    'np.random.seed(SEED)  # the global generator of np.random.rand(), np.random.shuffle()...',
    'rng = np.random.default_rng(SEED)  # prefer this one: rng.random(), rng.normal(), pass rng around'
  ];

  /**
   * torch: CPU and CUDA generators, cuDNN's switches, and what a DataLoader
   * needs for its workers and its shuffling.
   */
  export function torch(strict: boolean, numpy: boolean): string[] {
    return [
      'import torch',
      '',
      'torch.manual_seed(SEED)',
      'torch.cuda.manual_seed_all(SEED)',
      'torch.backends.cudnn.deterministic = True',
      'torch.backends.cudnn.benchmark = False',
      ...(strict
        ? [
            '# An op without a deterministic implementation now raises instead of varying.',
            'torch.use_deterministic_algorithms(True)'
          ]
        : []),
      '',
      '',
      'def seed_worker(worker_id):',
      '    """A DataLoader worker_init_fn: seeds each worker from torch\'s per-worker seed."""',
      '    worker_seed = torch.initial_seed() % 2**32',
      ...(numpy ? ['    np.random.seed(worker_seed)'] : []),
      '    random.seed(worker_seed)',
      '',
      '',
      'data_generator = torch.Generator().manual_seed(SEED)',
      '# DataLoader(dataset, shuffle=True, num_workers=4, worker_init_fn=seed_worker, generator=data_generator)'
    ];
  }

  /**
   * TensorFlow: Python's, numpy's and TensorFlow's seeds in one call.
   */
  export function tensorflow(strict: boolean): string[] {
    return [
      'import tensorflow as tf',
      '',
      'tf.keras.utils.set_random_seed(SEED)',
      ...(strict ? ['tf.config.experimental.enable_op_determinism()'] : [])
    ];
  }

  /**
   * JAX has no global state: a key, split for each use.
   */
  export const JAX = [
    'import jax',
    '',
    'key = jax.random.PRNGKey(SEED)  # split it for each use: key, subkey = jax.random.split(key)'
  ];

  /**
   * The printed audit: what was set, read back from the frameworks.
   */
  export function audit(options: ISeedCellOptions): string[] {
    const has = (framework: Framework) =>
      options.frameworks.includes(framework);
    const lines = [
      "print(f\"Reproducibility: seed {SEED}{' (strict)' if STRICT else ''}\")",
      'print("  random: random.seed(SEED)")'
    ];
    if (has('numpy')) {
      lines.push(
        'print(f"  numpy {np.__version__}: np.random.seed(SEED), rng = np.random.default_rng(SEED)")'
      );
    }
    if (has('torch')) {
      lines.push(
        'print(f"  torch {torch.__version__}: manual_seed, cuda.manual_seed_all(SEED); "',
        '      f"cudnn.deterministic={torch.backends.cudnn.deterministic}, "',
        '      f"cudnn.benchmark={torch.backends.cudnn.benchmark}, "',
        '      f"deterministic algorithms={torch.are_deterministic_algorithms_enabled()}")',
        "print(f\"  CUBLAS_WORKSPACE_CONFIG={os.environ.get('CUBLAS_WORKSPACE_CONFIG', 'not set')}\")",
        'print("  DataLoader: worker_init_fn=seed_worker, generator=data_generator")'
      );
    }
    if (has('tensorflow')) {
      lines.push(
        `print(f"  tensorflow {tf.__version__}: keras.utils.set_random_seed(SEED)${options.strict ? ', op determinism' : ''}")`
      );
    }
    if (has('jax')) {
      lines.push(
        'print(f"  jax {jax.__version__}: key = jax.random.PRNGKey(SEED)")'
      );
    }
    lines.push(
      "print(f\"  PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED', 'not set (str hashes differ between runs)')}\")"
    );
    if (options.strict && has('torch')) {
      lines.push(
        'if _cuda_was_initialised:',
        '    print("WARNING: CUDA was initialised before this cell ran, so CUBLAS_WORKSPACE_CONFIG does "',
        '          "not apply in this kernel: restart the kernel and run this cell first.")'
      );
    }
    return lines;
  }
}
