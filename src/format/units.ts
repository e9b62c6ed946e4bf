import { TranslationBundle } from '@jupyterlab/translation';

import { HISTORY_UNITS, HistoryField } from '../gpu/readings';

/**
 * MiB in a GiB.
 */
export const MIB_PER_GIB = 1024;

/**
 * MiB as GiB with one decimal, without the unit: 24564 -> "24.0".
 */
export function gib(mib: number): string {
  return Private.decimal(mib / MIB_PER_GIB, 1);
}

/**
 * Memory in use out of a total, in GiB: "21.9 / 24.0 GiB"; "12 MiB / 19.5
 * GiB" under a GiB.
 */
export function formatMemoryOf(
  usedMiB: number,
  totalMiB: number,
  trans: TranslationBundle
): string {
  return Private.inMiB(usedMiB)
    ? trans.__('%1 MiB / %2 GiB', Math.round(usedMiB), gib(totalMiB))
    : trans.__('%1 / %2 GiB', gib(usedMiB), gib(totalMiB));
}

/**
 * An amount of memory in GiB with one decimal, or in MiB below one GiB.
 */
export function formatMemory(mib: number, trans: TranslationBundle): string {
  return mib < MIB_PER_GIB
    ? trans.__('%1 MiB', Math.round(mib))
    : trans.__('%1 GiB', gib(mib));
}

/**
 * A throughput, in the unit that keeps it short: "340 kB/s", "1.2 MB/s",
 * "0 B/s" (decimal units, as disks and networks are rated).
 */
export function formatRate(
  bytesPerSecond: number,
  trans: TranslationBundle
): string {
  if (bytesPerSecond < 1e3) {
    return trans.__('%1 B/s', Math.round(bytesPerSecond));
  }
  if (bytesPerSecond < 1e6) {
    return trans.__('%1 kB/s', Math.round(bytesPerSecond / 1e3));
  }
  if (bytesPerSecond < 1e9) {
    return trans.__('%1 MB/s', (bytesPerSecond / 1e6).toFixed(1));
  }
  return trans.__('%1 GB/s', (bytesPerSecond / 1e9).toFixed(1));
}

/**
 * A share in percent, rounded: "37 %".
 */
export function formatPercent(
  percent: number,
  trans: TranslationBundle
): string {
  return trans.__('%1 %', Math.round(percent));
}

/**
 * A temperature, rounded: "13 °C".
 */
export function formatCelsius(
  celsius: number,
  trans: TranslationBundle
): string {
  return trans.__('%1 °C', Math.round(celsius));
}

/**
 * A power in watts, with one decimal below 100 W: "6.5 W", "230 W".
 */
export function formatWatts(watts: number, trans: TranslationBundle): string {
  return trans.__('%1 W', Private.watts(watts));
}

/**
 * Energy: "740 Wh", "7.5 kWh", "1234 kWh".
 */
export function formatEnergy(joules: number, trans: TranslationBundle): string {
  const wattHours = joules / 3600;
  return wattHours < 1000
    ? trans.__('%1 Wh', Math.round(wattHours))
    : trans.__(
        '%1 kWh',
        Private.decimal(wattHours / 1000, wattHours < 1e5 ? 1 : 0)
      );
}

/**
 * A power draw out of a limit: "6.5 / 230 W".
 */
export function formatWattsOf(
  drawWatts: number,
  limitWatts: number,
  trans: TranslationBundle
): string {
  return trans.__(
    '%1 / %2 W',
    Private.watts(drawWatts),
    Private.watts(limitWatts)
  );
}

/**
 * A reading the history keeps, with its unit (the server's table of readings
 * says which).
 */
export function formatReading(
  field: HistoryField,
  value: number,
  trans: TranslationBundle
): string {
  switch (HISTORY_UNITS[field]) {
    case '%':
      return formatPercent(value, trans);
    case 'MiB':
      return Private.inMiB(value)
        ? trans.__('%1 MiB', Math.round(value))
        : trans.__('%1 GiB', gib(value));
    case '°C':
      return formatCelsius(value, trans);
    case 'W':
      return formatWatts(value, trans);
    case 'MHz':
      return trans.__('%1 MHz', Math.round(value));
    case 'B/s':
      return formatRate(value, trans);
  }
}

/**
 * A length of time as a run's duration: "4.2 s", "38 s", "3 min 12 s",
 * "2 h 5 min".
 */
export function formatDuration(
  seconds: number,
  trans: TranslationBundle
): string {
  if (seconds < 10) {
    return trans.__('%1 s', Private.decimal(Math.max(0, seconds), 1));
  }
  const whole = Math.round(seconds);
  if (whole < 60) {
    return trans.__('%1 s', whole);
  }
  if (whole < 3600) {
    return trans.__('%1 min %2 s', Math.floor(whole / 60), whole % 60);
  }
  const minutes = Math.round(whole / 60);
  return trans.__('%1 h %2 min', Math.floor(minutes / 60), minutes % 60);
}

/**
 * How long ago something started, coarsely: "40 s", "12 min", "3 h", "2 d".
 */
export function formatAge(seconds: number, trans: TranslationBundle): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) {
    return trans.__('%1 s', whole);
  }
  if (whole < 3600) {
    return trans.__('%1 min', Math.floor(whole / 60));
  }
  if (whole < 86400) {
    return trans.__('%1 h', Math.floor(whole / 3600));
  }
  return trans.__('%1 d', Math.floor(whole / 86400));
}

/**
 * A day, as the interface's language writes it ("Nov 30, 2026",
 * "2026年11月30日"): JupyterLab's page language, as its own dates use.
 */
export function formatDay(iso: string): string {
  return new Intl.DateTimeFormat(Private.language(), {
    dateStyle: 'medium'
  }).format(new Date(iso));
}

/**
 * A time of day, as the interface's language writes it ("1:05 PM",
 * "13:05"), with seconds when asked: the time axis of the charts.
 */
export function formatClockTime(
  epochSeconds: number,
  withSeconds: boolean
): string {
  const key = `${Private.language()} ${withSeconds}`;
  let format = Private.clockFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(Private.language(), {
      hour: 'numeric',
      minute: '2-digit',
      ...(withSeconds ? { second: '2-digit' } : {})
    });
    Private.clockFormats.set(key, format);
  }
  return format.format(new Date(epochSeconds * 1000));
}

/**
 * Items as a list reads in the interface's language: "a, b" in English,
 * "a、b" in Chinese.
 */
export function formatList(
  items: readonly string[],
  trans: TranslationBundle
): string {
  return items.join(trans._p('list separator', ', '));
}

/**
 * Two sentences one after the other, as the interface's language writes
 * them (Chinese puts no space between them).
 */
export function formatSentences(
  first: string,
  second: string,
  trans: TranslationBundle
): string {
  return trans._p('two sentences', '%1 %2', first, second);
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Whether memory in use is told in MiB: under a GiB, but not nothing. The
   * 12 MiB a MIG instance's context takes read "0.0 GiB", as nothing does.
   */
  export function inMiB(mib: number): boolean {
    return mib > 0 && mib < MIB_PER_GIB;
  }

  /**
   * Watts with one decimal below 100 W, none above.
   */
  export function watts(watts: number): string {
    return decimal(watts, watts < 100 ? 1 : 0);
  }

  const decimalFormats = new Map<string, Intl.NumberFormat>();

  /**
   * The formatters of {@link formatClockTime}, one per language and
   * precision: the time axis formats each of its ticks on every redraw.
   */
  export const clockFormats = new Map<string, Intl.DateTimeFormat>();

  /**
   * A number with a fixed count of decimals, in the interface's language.
   */
  export function decimal(value: number, digits: number): string {
    // Building a formatter costs far more than formatting: the panel formats
    // on every reading, so each one is built once.
    const key = `${language()} ${digits}`;
    let format = decimalFormats.get(key);
    if (!format) {
      format = new Intl.NumberFormat(language(), {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits
      });
      decimalFormats.set(key, format);
    }
    return format.format(value);
  }

  /**
   * The language JupyterLab shows its page in (it sets the document's
   * `lang`), as its own dates and times use it; English without a page.
   */
  export function language(): string {
    return globalThis.document?.documentElement.lang || 'en';
  }
}
