/**
 * The frameworks the reproducibility cell knows, apart from the cell itself:
 * the inspector reads their versions when JupyterLab starts, the cell's code
 * loads when it is first written.
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
