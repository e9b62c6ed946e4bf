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
//   with one hidden, its data, limits and window) relative to the sidebar's tick;
// - the JS heap after 2 simulated hours relative to after 1 (bounded history: about 1.0);
// - the labextension's static assets, gzipped.
import { readdirSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
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
const { chartData, chartLimits, currentColumns, reportedCharts } =
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
      sm_clock_mhz: [210]
    });
  }
  return {
    interval_seconds: 1,
    history_seconds: HOUR,
    timestamps: [timestamp],
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
  return points + chartWindow(buffer, 300).max;
}
const dashboardMicros = time(() => {
  delta.timestamps[0] = clock++;
  dashboardTick(full, delta);
});
const panelMicros = time(() => {
  delta.timestamps[0] = clock++;
  tick(full, 0, delta);
});

// 4. What the browser downloads.
let gzipped = 0;
let files = 0;
for (const name of readdirSync(STATIC)) {
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
  `JS heap after 2 simulated hours / after 1: ${(afterTwoHours / afterOneHour).toFixed(3)} ` +
    `(${afterTwoHours.toFixed(1)} MiB / ${afterOneHour.toFixed(1)} MiB; ${kept} readings kept)`
);
console.log(
  `labextension static assets: ${(gzipped / 1024).toFixed(1)} KiB gzipped (${files} files)`
);
