const jestJupyterLab = require('@jupyterlab/testing/lib/jest-config');

const esModules = [
  '@codemirror',
  '@jupyter/react-components',
  '@jupyter/web-components',
  '@jupyter/ydoc',
  '@jupyterlab/',
  '@microsoft',
  'exenv-es6',
  'lib0',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  collectCoverageFrom: [
    'src/**/*.{ts,tsx}',
    '!src/**/*.d.ts',
    '!src/**/.ipynb_checkpoints/*'
  ],
  coverageReporters: ['lcov', 'text'],
  // Python environments and built copies hold package.json files of their own
  // (labextensions): jest's module map would warn of each name twice.
  modulePathIgnorePatterns: [
    '<rootDir>/\\.venv/',
    '<rootDir>/\\.dist-venv/',
    '<rootDir>/\\.kernel-envs/',
    '<rootDir>/dist/',
    '<rootDir>/jupyter_server_ext/',
    '<rootDir>/ui-tests/'
  ],
  setupFiles: ['<rootDir>/src/__tests__/shim.js'],
  testRegex: 'src/.*/.*.spec.ts[x]?$',
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
