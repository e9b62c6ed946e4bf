// JupyterLab's jest shims patch the DOM; the specs of the model, which must
// not need one, run with `@jest-environment node` and skip them.
if (typeof window !== 'undefined') {
  require('@jupyterlab/testing/lib/jest-shim');
}
