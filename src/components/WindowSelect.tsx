import { TranslationBundle } from '@jupyterlab/translation';
import { HTMLSelect } from '@jupyterlab/ui-components';
import * as React from 'react';

import { WINDOW_SECONDS } from '../charts/chartKinds';

/**
 * The properties of {@link WindowSelect}.
 */
export namespace WindowSelect {
  /**
   * The properties of {@link WindowSelect}.
   */
  export interface IProps {
    /**
     * How far back the charts show, in seconds.
     */
    seconds: number;
    /**
     * Called when the user picks another window.
     */
    onChange: (seconds: number) => void;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The labelled choice of how far back the charts show: 1 min to 1 h.
 */
export function WindowSelect(props: WindowSelect.IProps): React.ReactElement {
  const { trans } = props;
  return (
    <label className="jp-GpuMonitor-window">
      {trans.__('Window')}
      <HTMLSelect
        value={props.seconds}
        onChange={event => props.onChange(Number(event.currentTarget.value))}
        options={WINDOW_SECONDS.map(seconds => ({
          value: seconds,
          label: Private.windowLabel(seconds, trans)
        }))}
      />
    </label>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * "1 min", "5 min", "1 h".
   */
  export function windowLabel(
    seconds: number,
    trans: TranslationBundle
  ): string {
    return seconds % 3600 === 0
      ? trans.__('%1 h', seconds / 3600)
      : trans.__('%1 min', seconds / 60);
  }
}
