/**
 * The reproducibility cell: Python that seeds every random number generator
 * the kernel's frameworks have and turns on their deterministic switches.
 *
 * Its comments and its printed audit are in the language of the interface
 * that wrote it; the code, and the names the audit prints, are not
 * translated.
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { Framework, FRAMEWORKS } from './frameworks';

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
export function seedCellSource(
  options: ISeedCellOptions,
  trans: TranslationBundle
): string {
  const { seed, strict } = options;
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
    throw new RangeError(
      `The seed must be an integer from 0 to 2**32 - 1, not ${seed}`
    );
  }
  const has = (framework: Framework) => options.frameworks.includes(framework);
  const sections: string[][] = [Private.header(seed, strict, trans)];
  if (strict && has('torch')) {
    sections.push(Private.cublas(trans));
  }
  sections.push(Private.python(trans));
  if (has('numpy')) {
    sections.push(Private.numpy(trans));
  }
  if (has('torch')) {
    sections.push(Private.torch(strict, has('numpy'), trans));
  }
  if (has('tensorflow')) {
    sections.push(Private.tensorflow(strict));
  }
  if (has('jax')) {
    sections.push(Private.jax(trans));
  }
  sections.push(Private.audit(options, trans));
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
  export function header(
    seed: number,
    strict: boolean,
    trans: TranslationBundle
  ): string[] {
    return [
      ...comment(
        trans.__(
          'Reproducibility cell (jupyterlab-gpu-monitor): run it first. Inserting it again\nreplaces it. It seeds every random number generator below and prints what it set.'
        )
      ),
      'import os',
      'import random',
      'import sys',
      '',
      `SEED = ${seed}`,
      `STRICT = ${strict ? 'True' : 'False'}`,
      '',
      ...comment(
        trans.__(
          "PYTHONHASHSEED only works when Python starts: set it in the kernelspec's env to make\nstr hashes (and the order of sets of str) repeat from run to run."
        )
      )
    ];
  }

  /**
   * Strict torch: cuBLAS reads its workspace setting when CUDA initialises,
   * so it is set before; a kernel that made its CUDA context already needs a
   * restart for it to apply.
   */
  export function cublas(trans: TranslationBundle): string[] {
    return [
      ...comment(
        trans.__(
          'cuBLAS reads this once, when CUDA initialises: it must be set before.'
        )
      ),
      `_cuda_was_initialised = "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized() and os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in (":4096:8", ":16:8")`,
      `os.environ["CUBLAS_WORKSPACE_CONFIG"] = "${CUBLAS_CONFIG}"`
    ];
  }

  /**
   * Python's own generator, kept for the notebook's draws alone.
   */
  export function python(trans: TranslationBundle): string[] {
    return [
      'random.seed(SEED)',
      ...comment(
        trans.__(
          "IPython picks its banner's tip with this generator each time a frontend asks the\nkernel for its info (a reconnect, a console opened on it), moving every later draw:\nno tip, so the draws after this cell are the notebook's alone."
        )
      ),
      'try:',
      '    get_ipython().enable_tip = False',
      'except NameError:',
      '    pass'
    ];
  }

  /**
   * numpy: the legacy global generator, and a Generator to pass around.
   */
  export function numpy(trans: TranslationBundle): string[] {
    return [
      'import numpy as np',
      '',
      `np.random.seed(SEED)  # ${trans.__('the global generator of np.random.rand(), np.random.shuffle()...')}`,
      `rng = np.random.default_rng(SEED)  # ${trans.__('prefer this one: rng.random(), rng.normal(), pass rng around')}`
    ];
  }

  /**
   * torch: CPU and CUDA generators, cuDNN's switches, and what a DataLoader
   * needs for its workers and its shuffling.
   */
  export function torch(
    strict: boolean,
    numpy: boolean,
    trans: TranslationBundle
  ): string[] {
    return [
      'import torch',
      '',
      'torch.manual_seed(SEED)',
      'torch.cuda.manual_seed_all(SEED)',
      'torch.backends.cudnn.deterministic = True',
      'torch.backends.cudnn.benchmark = False',
      ...(strict
        ? [
            ...comment(
              trans.__(
                'An op without a deterministic implementation now raises instead of varying.'
              )
            ),
            'torch.use_deterministic_algorithms(True)'
          ]
        : []),
      '',
      '',
      'def seed_worker(worker_id):',
      `    """${inString(trans.__("A DataLoader worker_init_fn: seeds each worker from torch's per-worker seed."))}"""`,
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
  export function jax(trans: TranslationBundle): string[] {
    return [
      'import jax',
      '',
      `key = jax.random.PRNGKey(SEED)  # ${trans.__('split it for each use: key, subkey = jax.random.split(key)')}`
    ];
  }

  /**
   * The printed audit: what was set, read back from the frameworks.
   */
  export function audit(
    options: ISeedCellOptions,
    trans: TranslationBundle
  ): string[] {
    const has = (framework: Framework) =>
      options.frameworks.includes(framework);
    // The placeholders go through the translation as they are, to become
    // the f-string's expressions.
    const seed = fString(trans.__('Reproducibility: seed %1', '%1'), 'SEED');
    const lines = [
      `print(${seed} + (${JSON.stringify(trans.__(' (strict)'))} if STRICT else ""))`,
      'print("  random: random.seed(SEED)")'
    ];
    if (has('numpy')) {
      lines.push(
        'print(f"  numpy {np.__version__}: np.random.seed(SEED), rng = np.random.default_rng(SEED)")'
      );
    }
    if (has('torch')) {
      const notSet = JSON.stringify(trans.__('not set'));
      lines.push(
        'print(f"  torch {torch.__version__}: manual_seed, cuda.manual_seed_all(SEED); "',
        '      f"cudnn.deterministic={torch.backends.cudnn.deterministic}, "',
        '      f"cudnn.benchmark={torch.backends.cudnn.benchmark}, "',
        `      ${fString(trans.__('deterministic algorithms=%1', '%1'), 'torch.are_deterministic_algorithms_enabled()')})`,
        `print("  CUBLAS_WORKSPACE_CONFIG=" + os.environ.get("CUBLAS_WORKSPACE_CONFIG", ${notSet}))`,
        'print("  DataLoader: worker_init_fn=seed_worker, generator=data_generator")'
      );
    }
    if (has('tensorflow')) {
      const determinism = options.strict
        ? inString(trans.__(', op determinism'), true)
        : '';
      lines.push(
        `print(f"  tensorflow {tf.__version__}: keras.utils.set_random_seed(SEED)${determinism}")`
      );
    }
    if (has('jax')) {
      lines.push(
        'print(f"  jax {jax.__version__}: key = jax.random.PRNGKey(SEED)")'
      );
    }
    const hashSeedNotSet = JSON.stringify(
      trans.__('not set (str hashes differ between runs)')
    );
    lines.push(
      `print("  PYTHONHASHSEED=" + os.environ.get("PYTHONHASHSEED", ${hashSeedNotSet}))`
    );
    if (options.strict && has('torch')) {
      const warning = trans.__(
        'WARNING: CUDA was initialised before this cell ran, so CUBLAS_WORKSPACE_CONFIG does not apply in this kernel: restart the kernel and run this cell first.'
      );
      lines.push(
        'if _cuda_was_initialised:',
        `    print(${JSON.stringify(warning)})`
      );
    }
    return lines;
  }

  /**
   * A text as Python comment lines, one per line of the text.
   */
  function comment(text: string): string[] {
    return text.split('\n').map(line => `# ${line}`);
  }

  /**
   * A text escaped to stand inside a double-quoted Python string, or an
   * f-string's literal part (its braces doubled).
   */
  function inString(text: string, formatted = false): string {
    const escaped = JSON.stringify(text).slice(1, -1);
    return formatted
      ? escaped.replace(/[{}]/g, brace => brace + brace)
      : escaped;
  }

  /**
   * A Python f-string of a text whose %1, %2… are Python expressions.
   */
  function fString(text: string, ...expressions: string[]): string {
    const literal = inString(text, true).replace(
      /%(\d+)/g,
      (_, position: string) => `{${expressions[Number(position) - 1]}}`
    );
    return `f"${literal}"`;
  }
}
