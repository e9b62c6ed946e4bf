// The panel's model under a full hour of readings, and the size of what the browser downloads.
//
//   jlpm build:prod && node --expose-gc bench/panel.mjs      (`make bench` runs both)
//
// Prints, each against a baseline measured in the same run:
// - the time to apply one tick (one new reading of 8 GPUs, the data of the 4 charts and their
//   window) to a full hour of history (3600 readings), relative to a plain
//   Array.prototype.slice of the same columns, which is what a panel that copies its window
//   out of the history on every tick would pay at least;
// - the dashboard's tick (the same reading, then each chart the GPUs report: its GPUs shown
//   with one hidden, its data, limits and a window of the whole hour) relative to the
//   sidebar's tick;
// - drawing a tick in Debian's Chromium: uPlot's setData of an hour of 8 GPUs on the
//   dashboard's 4 full-size charts (520 x 280 px) relative to the sidebar's 4 (230 x 120 px),
//   the charts' own series styles, in one page, in turns;
// - the JS heap after 2 simulated hours relative to after 1 (bounded history: about 1.0);
// - the labextension's static assets, gzipped (every file, lazily loaded ones too: what /lab
//   itself fetches is measured by ui-tests/tests/dashboard.spec.ts on a production build).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STATIC = join(
  ROOT,
  'jupyter_server_ext/jupyterlab_gpu_monitor/labextension/static'
);
const GPUS = 8;
const HOUR = 3600;

// lib/ is TypeScript's ES module output for webpack: relative imports without ".js", in a
// package without "type": "module". Let node read it the same way.
register(
  'data:text/javascript,' +
    encodeURIComponent(`
      export async function resolve(specifier, context, next) {
        const bare = specifier.startsWith('.') && !/\\.[cm]?js$/.test(specifier);
        return next(bare ? specifier + '.js' : specifier, context);
      }
      export async function load(url, context, next) {
        const lib = url.startsWith(${JSON.stringify(new URL('../lib/', import.meta.url).href)});
        return next(url, lib ? { ...context, format: 'module' } : context);
      }`)
);
const { GpuHistoryBuffer } = await import('../lib/gpu/history.js');
const { CHART_KINDS, chartWindow } = await import('../lib/gpu/chartKinds.js');
const { chartData, chartLimits, currentColumns, reportedCharts, seriesStyle } =
  await import('../lib/gpu/charts.js');

if (typeof globalThis.gc !== 'function') {
  throw new Error('run node with --expose-gc');
}

/** One reading of every GPU at `timestamp`, as `GET gpus/history?since=` sends it. */
function reading(timestamp) {
  const gpus = [];
  for (let index = 0; index < GPUS; index++) {
    gpus.push({
      index,
      uuid: `GPU-${index}`,
      name: 'NVIDIA RTX A5000',
      utilization_gpu: [(timestamp * 7 + index) % 100],
      utilization_memory: [0],
      memory_used_mib: [22437 - index],
      memory_total_mib: [24564],
      temperature_c: [40 + index],
      power_draw_w: [6.52 + index],
      fan_speed_pct: [30],
      sm_clock_mhz: [210],
      pcie_received_bytes_per_second: [null],
      nvlink_received_bytes_per_second: [null]
    });
  }
  return {
    interval_seconds: 1,
    history_seconds: HOUR,
    timestamps: [timestamp],
    spacing_seconds: [1],
    gpus
  };
}

/** What the panel does on a tick: keep the reading, hand each chart its data and window. */
function tick(buffer, timestamp, delta) {
  buffer.append(delta ?? reading(timestamp));
  let points = 0;
  for (const kind of CHART_KINDS) {
    points += chartData(buffer, kind).length;
  }
  return points + chartWindow(buffer, 300).max;
}

/** Median time of `run` in µs over `rounds` rounds of `repeat` calls. */
function time(run, rounds = 31, repeat = 200) {
  const samples = [];
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    for (let i = 0; i < repeat; i++) {
      run();
    }
    samples.push(((performance.now() - start) * 1000) / repeat);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}

function heapMiB() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

// 1. The heap after one simulated hour, and after two.
const watched = new GpuHistoryBuffer();
let clock = 1_800_000_000;
for (let i = 0; i < HOUR; i++) {
  tick(watched, clock++);
}
const afterOneHour = heapMiB();
for (let i = 0; i < HOUR; i++) {
  tick(watched, clock++);
}
const afterTwoHours = heapMiB();
const kept = watched.timestamps.length;

// 2. A tick against a full hour, and slicing the same columns. One answer object is reused,
// so that both sides time only the work on the history, not making the server's answer.
const full = watched;
const delta = reading(clock);
const tickMicros = time(() => {
  delta.timestamps[0] = clock++;
  tick(full, 0, delta);
});
const columns = [
  full.timestamps,
  ...full.gpus.flatMap(gpu =>
    CHART_KINDS.map(kind => chartData(full, kind)[gpu.index + 1])
  )
];
let sink = 0;
const sliceMicros = time(() => {
  for (const column of columns) {
    sink += column.slice().length;
  }
});
if (sink === 0) {
  throw new Error('nothing was sliced');
}

// 3. The dashboard's tick against the same hour: what it does besides the sidebar's is to
// pick the charts the GPUs report, the GPUs shown (one hidden from the legend) and each
// chart's limits from the latest snapshot.
const snapshot = {
  gpus: Array.from({ length: GPUS }, (_, index) => ({
    index,
    uuid: `GPU-${index}`,
    utilization_gpu: 50,
    memory_used_mib: 22437,
    memory_total_mib: 24564,
    temperature_c: 40,
    temperature_slowdown_c: 87,
    power_draw_w: 6.52,
    power_limit_w: 230
  }))
};
const hidden = new Set([3]);
function dashboardTick(buffer, delta) {
  buffer.append(delta);
  let points = 0;
  for (const kind of reportedCharts(CHART_KINDS, snapshot)) {
    const shown = currentColumns(buffer, snapshot).filter(
      gpu => !hidden.has(gpu.index)
    );
    points += chartData(buffer, kind, shown).length;
    points += chartLimits(kind, snapshot).lines.length;
  }
  return points + chartWindow(buffer, HOUR).max;
}
const dashboardMicros = time(() => {
  delta.timestamps[0] = clock++;
  dashboardTick(full, delta);
});
const panelMicros = time(() => {
  delta.timestamps[0] = clock++;
  tick(full, 0, delta);
});

// 4. Drawing it: uPlot in a real browser, the dashboard's charts against the sidebar's.
const drawn = await drawInChromium();

// 5. What the browser downloads.
let gzipped = 0;
let files = 0;
for (const name of readdirSync(STATIC)) {
  if (name.endsWith('.map')) {
    continue;
  }
  gzipped += gzipSync(readFileSync(join(STATIC, name)), { level: 9 }).length;
  files++;
}

console.log(
  `panel tick, ${GPUS} GPUs x ${CHART_KINDS.length} charts x ${full.timestamps.length} readings: ` +
    `${tickMicros.toFixed(2)} µs; Array.prototype.slice of the same ${columns.length} columns: ` +
    `${sliceMicros.toFixed(1)} µs; ratio ${(tickMicros / sliceMicros).toFixed(4)}`
);
console.log(
  `dashboard tick, ${GPUS} GPUs (one hidden) x ${CHART_KINDS.length} charts x ${full.timestamps.length} readings: ` +
    `${dashboardMicros.toFixed(2)} µs; the sidebar's tick in the same run: ${panelMicros.toFixed(2)} µs; ` +
    `ratio ${(dashboardMicros / panelMicros).toFixed(2)}`
);
console.log(
  drawn === null
    ? 'drawing in Chromium: skipped (no /usr/bin/chromium; set CHROMIUM to another)'
    : `drawing a tick in Chromium, ${GPUS} GPUs x ${CHART_KINDS.length} charts x ${HOUR} readings: ` +
        `dashboard (520 x 280 px) ${drawn.dashboard.toFixed(2)} ms; sidebar (230 x 120 px) ` +
        `${drawn.sidebar.toFixed(2)} ms; ratio ${(drawn.dashboard / drawn.sidebar).toFixed(2)}`
);
console.log(
  `JS heap after 2 simulated hours / after 1: ${(afterTwoHours / afterOneHour).toFixed(3)} ` +
    `(${afterTwoHours.toFixed(1)} MiB / ${afterOneHour.toFixed(1)} MiB; ${kept} readings kept)`
);
console.log(
  `labextension static assets, no source maps: ${(gzipped / 1024).toFixed(1)} KiB gzipped (${files} files)`
);

/**
 * The median time of a tick's drawing, in ms, of the dashboard's charts and of the sidebar's:
 * uPlot (the panel's own copy) in Debian's Chromium, each chart given an hour of 8 GPUs one
 * reading longer than the last (setData redraws it), the two sets in turns in one page. Null
 * without Chromium.
 */
async function drawInChromium() {
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    return null;
  }
  const require = createRequire(join(ROOT, 'ui-tests', 'package.json'));
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    args: ['--disable-gpu', '--disable-background-networking', '--no-first-run']
  });
  try {
    const page = await browser.newPage({
      viewport: { width: 1600, height: 1000 }
    });
    await page.addScriptTag({
      path: join(ROOT, 'node_modules', 'uplot', 'dist', 'uPlot.iife.min.js')
    });
    // The series as the charts style them: a colour each, dashed from the sixth GPU on.
    const series = Array.from(
      { length: GPUS },
      (_, index) => seriesStyle(index).dash
    );
    return await page.evaluate(
      ({ gpus, hour, kinds, dashes }) => {
        const make = (width, height) =>
          Array.from({ length: kinds }, () => {
            // The page's own globals: this function runs in Chromium.
            const { document, uPlot } = globalThis;
            const element = document.createElement('div');
            document.body.appendChild(element);
            return new uPlot(
              {
                width,
                height,
                legend: { show: false },
                scales: { x: { time: true } },
                axes: [{ size: 30 }, { size: 40 }],
                series: [
                  {},
                  ...dashes.map((dash, index) => ({
                    stroke: `hsl(${index * 45}, 70%, 45%)`,
                    width: 1.5,
                    points: { show: false },
                    ...(dash ? { dash } : {})
                  }))
                ]
              },
              [[]],
              element
            );
          });
        const dashboard = make(520, 280);
        const sidebar = make(230, 120);
        const start = 1_800_000_000;
        const columns = [Array.from({ length: hour }, (_, i) => start + i)];
        for (let gpu = 0; gpu < gpus; gpu++) {
          columns.push(
            Array.from(
              { length: hour },
              (_, i) => 50 + 40 * Math.sin((i + gpu * 90) / 300)
            )
          );
        }
        const tick = charts => {
          columns[0].push(columns[0][columns[0].length - 1] + 1);
          columns[0].shift();
          for (let gpu = 1; gpu <= gpus; gpu++) {
            columns[gpu].push(columns[gpu][0]);
            columns[gpu].shift();
          }
          const began = performance.now();
          for (const chart of charts) {
            // In a batch, uPlot draws before it returns (else in a microtask).
            chart.batch(() =>
              chart.setData(columns.map(column => column.slice()))
            );
          }
          return performance.now() - began;
        };
        const median = values =>
          values.sort((a, b) => a - b)[values.length >> 1];
        const times = { dashboard: [], sidebar: [] };
        for (let round = 0; round < 5; round++) {
          tick(dashboard);
          tick(sidebar);
        }
        for (let round = 0; round < 60; round++) {
          times.dashboard.push(tick(dashboard));
          times.sidebar.push(tick(sidebar));
        }
        return {
          dashboard: median(times.dashboard),
          sidebar: median(times.sidebar)
        };
      },
      { gpus: GPUS, hour: HOUR, kinds: CHART_KINDS.length, dashes: series }
    );
  } finally {
    await browser.close();
  }
}
