import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { MonitorMessage } from '../components/MonitorMessage';
import { ILabLedger, ILabLedgerRow } from '../restapi/gpus';
import { LOW_UTILIZATION_PERCENT } from '../restapi/rules';
import { LEDGER_PERIODS } from './model';

/**
 * The properties of {@link LedgerTable}.
 */
export namespace LedgerTable {
  /**
   * The properties of {@link LedgerTable}.
   */
  export interface IProps {
    /**
     * The ledger of the period; null until it came.
     */
    ledger: ILabLedger | null;
    /**
     * The period, in seconds.
     */
    seconds: number;
    /**
     * Called when the user picks another period.
     */
    onSeconds: (seconds: number) => void;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The lab's ledger: GPU-hours busy and idle-held per user and per notebook
 * over the last day, week or month, the most idle-held first, and how many
 * GPU-hours notebooks held for nothing.
 */
export function LedgerTable(props: LedgerTable.IProps): React.ReactElement {
  const { ledger, trans } = props;
  const periods: [number, string][] = [
    [LEDGER_PERIODS.day, trans.__('Last day')],
    [LEDGER_PERIODS.week, trans.__('Last week')],
    [LEDGER_PERIODS.month, trans.__('Last 30 days')]
  ];
  return (
    <section
      className="jp-GpuMonitor-labLedger"
      aria-label={trans.__('GPU-hours')}
    >
      <div className="jp-GpuMonitor-labHeader">
        <h3 className="jp-GpuMonitor-labTitle">{trans.__('GPU-hours')}</h3>
        <select
          className="jp-GpuMonitor-labUser"
          aria-label={trans.__('Period')}
          value={props.seconds}
          onChange={event => props.onSeconds(Number(event.target.value))}
        >
          {periods.map(([seconds, label]) => (
            <option key={seconds} value={seconds}>
              {label}
            </option>
          ))}
        </select>
      </div>
      {ledger === null ? (
        <p className="jp-GpuMonitor-loading" role="status">
          {trans.__('Adding up the GPU-hours…')}
        </p>
      ) : ledger.error ? (
        <MonitorMessage problem={ledger.error} trans={trans} />
      ) : ledger.notebooks.length === 0 ? (
        <p className="jp-GpuMonitor-labEmpty">
          {trans.__(
            "No notebook held a GPU in this period, or the lab's Prometheus does not load prometheus/lab.yml, whose rules count the hours."
          )}
        </p>
      ) : (
        <>
          <p className="jp-GpuMonitor-labDigest">
            {Private.digest(ledger.notebooks, trans)}
          </p>
          <Private.Hours
            label={trans.__('GPU-hours per user')}
            first={trans.__('User')}
            rows={Private.byUser(ledger.notebooks)}
            trans={trans}
          />
          <Private.Hours
            label={trans.__('GPU-hours per notebook')}
            first={trans.__('Notebook')}
            rows={ledger.notebooks.map(row => ({
              name: `${row.user} · ${row.notebook || '–'}`,
              own: row.own,
              busy: row.busy_hours,
              idleHeld: row.idle_held_hours
            }))}
            trans={trans}
          />
        </>
      )}
    </section>
  );
}

/**
 * File-local parts of the ledger.
 */
namespace Private {
  /**
   * A row of hours: a user's, or a notebook's.
   */
  export interface IHours {
    name: string;
    own: boolean;
    busy: number;
    idleHeld: number;
  }

  /**
   * The notebooks' hours summed per user, the most idle-held first.
   */
  export function byUser(rows: readonly ILabLedgerRow[]): IHours[] {
    const users = new Map<string, IHours>();
    for (const row of rows) {
      const user = users.get(row.user) ?? {
        name: row.user,
        own: row.own,
        busy: 0,
        idleHeld: 0
      };
      user.busy += row.busy_hours;
      user.idleHeld += row.idle_held_hours;
      users.set(row.user, user);
    }
    return [...users.values()].sort(
      (a, b) => b.idleHeld - a.idleHeld || b.busy - a.busy
    );
  }

  /**
   * "3 notebooks held 140.0 GPU-hours at under 30 %; the largest: ana's
   * f7d8bce8e464, 90.0."
   */
  export function digest(
    rows: readonly ILabLedgerRow[],
    trans: TranslationBundle
  ): string {
    const held = rows.filter(row => row.idle_held_hours > 0);
    if (held.length === 0) {
      return trans.__('No notebook held a GPU while it idled.');
    }
    const total = held.reduce((sum, row) => sum + row.idle_held_hours, 0);
    const largest = held.reduce((most, row) =>
      row.idle_held_hours > most.idle_held_hours ? row : most
    );
    return trans._n(
      "%1 notebook held %2 GPU-hours at under %3 %; the largest: %4's %5, %6.",
      "%1 notebooks held %2 GPU-hours at under %3 %; the largest: %4's %5, %6.",
      held.length,
      total.toFixed(1),
      LOW_UTILIZATION_PERCENT,
      largest.user,
      largest.notebook || '–',
      largest.idle_held_hours.toFixed(1)
    );
  }

  /**
   * A table of hours, the user's own rows marked.
   */
  export function Hours(props: {
    label: string;
    first: string;
    rows: IHours[];
    trans: TranslationBundle;
  }): React.ReactElement {
    const { trans } = props;
    return (
      <table className="jp-GpuMonitor-labHours" aria-label={props.label}>
        <thead>
          <tr>
            <th scope="col">{props.first}</th>
            <th scope="col" className="jp-GpuMonitor-labHoursValue">
              {trans.__('Busy')}
            </th>
            <th scope="col" className="jp-GpuMonitor-labHoursValue">
              {trans.__('Idle-held')}
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(row => (
            <tr key={row.name} className={row.own ? 'jp-mod-own' : undefined}>
              <th scope="row">
                {row.own ? trans.__('%1 (you)', row.name) : row.name}
              </th>
              <td className="jp-GpuMonitor-labHoursValue">
                {row.busy.toFixed(1)}
              </td>
              <td className="jp-GpuMonitor-labHoursValue">
                {row.idleHeld.toFixed(1)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
}
