/**
 * Configuration for Playwright using default from @jupyterlab/galata
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

module.exports = {
  ...baseConfig,
  use: {
    ...baseConfig.use,
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
    command: 'jlpm start',
    url: 'http://localhost:8888/lab',
    timeout: 120000,
    reuseExistingServer: !process.env.CI
  }
};
