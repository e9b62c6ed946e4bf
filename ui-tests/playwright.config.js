/**
 * Configuration for Playwright using default from @jupyterlab/galata
 */
const { execFileSync } = require('child_process');
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// A port free on this machine, never 8888 where `make lab` listens: chosen
// once, by the main process; its workers load this file again and inherit it.
function freePort() {
  return execFileSync(process.execPath, [
    '-e',
    `const server = require('net').createServer();
     server.listen(0, '127.0.0.1', () => {
       console.log(server.address().port);
       server.close();
     });`
  ])
    .toString()
    .trim();
}
if (!process.env.GALATA_PORT) {
  process.env.GALATA_PORT = freePort();
}
// The port of the lab's JupyterLab (tests/lab.spec.ts), chosen the same way.
if (!process.env.GALATA_LAB_PORT) {
  process.env.GALATA_LAB_PORT = freePort();
}
const baseURL = `http://localhost:${process.env.GALATA_PORT}`;

module.exports = {
  ...baseConfig,
  use: {
    ...baseConfig.use,
    baseURL,
    video: 'off',
    trace: 'off',
    launchOptions: {
      // Debian's chromium: no browser is downloaded by Playwright here.
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic'
      ]
    }
  },
  webServer: {
    // The server's log goes to a file (jupyter-server.log here), not between
    // the tests' results: a failure's cause is there.
    command: `jlpm start --port ${process.env.GALATA_PORT} 2> jupyter-server.log`,
    url: `${baseURL}/lab`,
    timeout: 120000,
    reuseExistingServer: !process.env.CI
  }
};
