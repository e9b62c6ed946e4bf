import * as React from 'react';

/**
 * The properties of {@link MeterBar}.
 */
export namespace MeterBar {
  /**
   * The properties of {@link MeterBar}.
   */
  export interface IProps {
    /**
     * What is measured, e.g. "Memory": the meter's accessible name (the
     * list's column heads show it).
     */
    label: string;
    /**
     * The reading; null when there is none.
     */
    value: number | null;
    /**
     * The reading that fills the bar.
     */
    max: number;
    /**
     * The reading told for a person, e.g. "21.9 / 24.0 GiB", or why there is
     * none.
     */
    text: string;
    /**
     * A shorter text shown in its place where the list has no room for it,
     * e.g. "MIG" for "n/a under MIG"; the text by default.
     */
    shown?: string;
    /**
     * A longer explanation, shown on hover.
     */
    title?: string;
    /**
     * A warning about the reading, e.g. "nearly full": the bar and its text
     * take the warning colour, and the meter's accessible text says it.
     */
    warning?: string | null;
  }
}

/**
 * A bar that fills with a reading, e.g. utilisation or memory, and the
 * reading beside it: two cells of the GPU list's grid, so that the bars of
 * every GPU line up.
 */
export function MeterBar(props: MeterBar.IProps): React.ReactElement {
  const { label, value, max, text, title, warning } = props;
  const shown = props.shown ?? text;
  const told = warning ? `${text}, ${warning}` : text;
  const warn = warning ? ' jp-mod-warn' : '';
  const share =
    value === null || max <= 0 ? 0 : Math.min(1, Math.max(0, value / max));
  return (
    <>
      <div
        className={`jp-GpuMonitor-meterTrack${warn}`}
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value ?? undefined}
        aria-valuetext={told}
        title={title ?? `${label}: ${told}`}
      >
        <div
          className="jp-GpuMonitor-meterFill"
          style={{ width: `${(share * 100).toFixed(1)}%` }}
        />
      </div>
      <span
        className={`jp-GpuMonitor-meterText${warn}`}
        title={title ?? told}
        aria-hidden
      >
        {shown}
      </span>
    </>
  );
}
