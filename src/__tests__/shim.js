// JupyterLab's jest shims patch the DOM; the specs of the model, which must
// not need one, run with `@jest-environment node` and skip them.
if (typeof window !== 'undefined') {
  require('@jupyterlab/testing/lib/jest-shim');
  // jsdom has no Clipboard API (Chromium has; Galata uses it): without one,
  // @jupyterlab/apputils warns as it is imported, in every spec.
  const copied = { text: '' };
  Object.defineProperty(navigator, 'clipboard', {
    configurable: true,
    value: {
      writeText: async text => {
        copied.text = text;
      },
      readText: async () => copied.text
    }
  });
}

// What Yjs says, correctly but to no one, when a notebook model is built
// outside a document provider: a cell's type read as it is created (before it
// joins the notebook's Y.Doc), and a pasted cell's JSON moved between docs.
// Every other warning and error is printed, so a real one stands out.
const UPSTREAM_NOISE = [
  'Invalid access: Add Yjs type to a document before reading data.',
  '[yjs#509] Not same Y.Doc'
];
for (const level of ['warn', 'error']) {
  const print = console[level].bind(console);
  console[level] = (...args) => {
    if (!UPSTREAM_NOISE.includes(String(args[0]))) {
      print(...args);
    }
  };
}
