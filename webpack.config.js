/**
 * What this extension adds to @jupyter/builder's bundling (package.json's
 * jupyterlab.webpackConfig): its own styles are shipped minified. The CSS says
 * why each rule is as it is; without this, every page load would fetch those
 * words too (1.3 KiB gzipped of the 37 KiB /lab budget, dashboard.spec.ts).
 */
const path = require('path');

module.exports = {
  module: {
    rules: [
      {
        test: /\.css$/,
        include: path.resolve(__dirname, 'style'),
        enforce: 'pre',
        loader: 'builtin:lightningcss-loader',
        options: { minify: true }
      }
    ]
  }
};
