import { TranslationBundle } from '@jupyterlab/translation';
import { launchIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { MonitorMessage } from '../components/MonitorMessage';
import { IRoomNeeded } from '../freeGpu/freeGpu';
import { describeFailure } from '../gpu/failure';
import {
  formatAge,
  formatClockTime,
  formatMemory,
  formatPercent
} from '../format/units';
import { ILabGpu, ILabLedger, ILabNode, ILabView } from '../restapi/gpus';
import { IRequestFailure } from '../tokens';
import {
  filterLab,
  freeAnywhere,
  ILabChoice,
  LabFilter,
  labUsers
} from './choose';
import { LedgerTable } from './LedgerTable';

/**
 * The properties of {@link LabView}.
 */
export namespace LabView {
  /**
   * The properties of {@link LabView}.
   */
  export interface IProps {
    /**
     * The latest view of the lab; null before the first answer.
     */
    view: ILabView | null;
    /**
     * Why this server did not answer; null when it did.
     */
    failure: IRequestFailure | null;
    /**
     * The side panel's dense rows, or the Lab tab's wider cells that name
     * each holder's notebook.
     */
    compact: boolean;
    /**
     * The room the current notebook needs on a GPU, for "Free GPU
     * anywhere".
     */
    room: IRoomNeeded;
    /**
     * Open the Lab tab; none in the tab itself.
     */
    onOpenTab?: () => void;
    /**
     * The lab's ledger and its period, in the Lab tab; none in the panel.
     */
    ledger?: {
      answer: ILabLedger | null;
      seconds: number;
      onSeconds: (seconds: number) => void;
    };
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * Every machine of the lab as a row of its GPUs (utilisation, memory, who
 * holds it, the user's own marked), how many machines report, filters, and
 * the best GPU anywhere for the current notebook.
 */
export function LabView(props: LabView.IProps): React.ReactElement {
  const { view, failure, compact, trans } = props;
  const [filter, setFilter] = React.useState<LabFilter>({ kind: 'all' });
  const problem = failure
    ? describeFailure(failure, trans)
    : (view?.error ?? null);
  const nodes = view ? filterLab(view.nodes, filter) : [];
  return (
    <section
      className={`jp-GpuMonitor-lab${compact ? ' jp-mod-compact' : ''}`}
      aria-label={trans.__('Lab')}
    >
      <div className="jp-GpuMonitor-labHeader">
        {compact ? (
          <h3 className="jp-GpuMonitor-labTitle">{trans.__('Lab')}</h3>
        ) : (
          <h2 className="jp-GpuMonitor-title">{trans.__('GPU Lab')}</h2>
        )}
        {view && view.known > 0 && (
          <span
            className={`jp-GpuMonitor-labReporting${view.reporting < view.known ? ' jp-mod-warn' : ''}`}
          >
            {trans.__(
              '%1 of %2 machines reporting',
              view.reporting,
              view.known
            )}
          </span>
        )}
        {props.onOpenTab && (
          <button
            type="button"
            className="jp-GpuMonitor-iconButton"
            aria-label={trans.__('Open the GPU Lab')}
            title={trans.__(
              'Open the GPU Lab: every machine, in the main area'
            )}
            onClick={props.onOpenTab}
          >
            <launchIcon.react tag="span" />
          </button>
        )}
      </div>
      {problem && <MonitorMessage problem={problem} trans={trans} />}
      {view === null && !failure && (
        <p className="jp-GpuMonitor-loading" role="status">
          {trans.__("Asking the lab's Prometheus…")}
        </p>
      )}
      {view && !view.error && (
        <>
          <Private.FreeAnywhere
            choice={freeAnywhere(view, props.room)}
            view={view}
            trans={trans}
          />
          <Private.Filters
            filter={filter}
            users={labUsers(view.nodes)}
            onChange={setFilter}
            trans={trans}
          />
          {view.nodes.length === 0 && (
            <p className="jp-GpuMonitor-labEmpty">
              {trans.__(
                "The lab's Prometheus has no series of the GPU monitor: does it scrape each server's /gpu-monitor/metrics?"
              )}
            </p>
          )}
          {nodes.map(node => (
            <Private.NodeRow
              key={node.host}
              node={node}
              now={view.timestamp}
              compact={compact}
              here={node.host === view.host}
              trans={trans}
            />
          ))}
          {props.ledger && (
            <LedgerTable
              ledger={props.ledger.answer}
              seconds={props.ledger.seconds}
              onSeconds={props.ledger.onSeconds}
              trans={trans}
            />
          )}
        </>
      )}
    </section>
  );
}

/**
 * File-local parts of the Lab view.
 */
namespace Private {
  /**
   * "Free GPU anywhere": the best GPU of the lab for the current notebook,
   * with a link to its machine where the admin set one.
   */
  export function FreeAnywhere(props: {
    choice: ILabChoice | null;
    view: ILabView;
    trans: TranslationBundle;
  }): React.ReactElement | null {
    const { choice, view, trans } = props;
    if (view.nodes.length === 0) {
      return null;
    }
    if (choice === null) {
      return (
        <p className="jp-GpuMonitor-labFree">
          {trans.__('No GPU of the lab has the room free now.')}
        </p>
      );
    }
    const { node, gpu } = choice;
    const place = trans.__('%1 GPU %2', node.host, gpu.index);
    const facts = [trans.__('%1 free', formatMemory(choice.freeMiB, trans))];
    if (gpu.idle_since !== null) {
      facts.push(
        trans.__(
          'idle %1',
          formatAge(Math.max(0, view.timestamp - gpu.idle_since), trans)
        )
      );
    }
    const fits =
      choice.needMiB === null
        ? null
        : trans.__(
            "fits this notebook's recorded %1",
            formatMemory(choice.needMiB, trans)
          );
    return (
      <p className="jp-GpuMonitor-labFree">
        <span className="jp-GpuMonitor-labFreeTitle">
          {trans.__('Free GPU anywhere:')}
        </span>{' '}
        {node.open_url ? (
          <a
            href={node.open_url}
            target="_blank"
            rel="noopener noreferrer"
            title={trans.__('Start working on %1', node.host)}
          >
            {place}
          </a>
        ) : (
          <strong>{place}</strong>
        )}
        {node.host === view.host && ` ${trans.__('(this machine)')}`}
        {': '}
        {facts.join(trans._p('list separator', ', '))}
        {fits && `; ${fits}`}
      </p>
    );
  }

  /**
   * All, free, mine, or one user's GPUs.
   */
  export function Filters(props: {
    filter: LabFilter;
    users: string[];
    onChange: (filter: LabFilter) => void;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { filter, users, onChange, trans } = props;
    const choices: [LabFilter['kind'], string][] = [
      ['all', trans.__('All')],
      ['free', trans.__('Free')],
      ['mine', trans.__('Mine')]
    ];
    return (
      <div
        className="jp-GpuMonitor-labFilters"
        role="group"
        aria-label={trans.__('Show')}
      >
        {choices.map(([kind, label]) => (
          <button
            key={kind}
            type="button"
            className="jp-GpuMonitor-labFilter"
            aria-pressed={filter.kind === kind}
            onClick={() => onChange({ kind } as LabFilter)}
          >
            {label}
          </button>
        ))}
        {users.length > 0 && (
          <select
            className="jp-GpuMonitor-labUser"
            aria-label={trans.__("A user's GPUs")}
            value={filter.kind === 'user' ? filter.user : ''}
            onChange={event =>
              onChange(
                event.target.value
                  ? { kind: 'user', user: event.target.value }
                  : { kind: 'all' }
              )
            }
          >
            <option value="">{trans.__('User…')}</option>
            {users.map(user => (
              <option key={user} value={user}>
                {user}
              </option>
            ))}
          </select>
        )}
      </div>
    );
  }

  /**
   * A machine: its name (a link where the admin set one), how many of its
   * GPUs are free or that it stopped reporting, and a cell per GPU.
   */
  export function NodeRow(props: {
    node: ILabNode;
    now: number;
    compact: boolean;
    here: boolean;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { node, compact, trans } = props;
    const free = node.gpus.filter(gpu => gpu.free).length;
    const state = node.reporting
      ? trans._n(
          '%2 of %1 GPU free',
          '%2 of %1 GPUs free',
          node.gpus.length,
          free
        )
      : node.last_seen === null
        ? trans.__('not reporting')
        : trans.__(
            'not reporting since %1',
            formatClockTime(node.last_seen, false)
          );
    return (
      <div
        className={`jp-GpuMonitor-labNode${node.reporting ? '' : ' jp-mod-stale'}`}
        role="group"
        aria-label={node.host}
      >
        <div className="jp-GpuMonitor-labNodeHead">
          {node.open_url ? (
            <a
              className="jp-GpuMonitor-labHost"
              href={node.open_url}
              target="_blank"
              rel="noopener noreferrer"
              title={trans.__('Start working on %1', node.host)}
            >
              {node.host}
            </a>
          ) : (
            <span className="jp-GpuMonitor-labHost">{node.host}</span>
          )}
          {props.here && (
            <span className="jp-GpuMonitor-labHere">
              {trans.__('(this machine)')}
            </span>
          )}
          {node.exporter && (
            <span
              className="jp-GpuMonitor-labExporter"
              title={trans.__(
                'No server with the GPU monitor reports this machine: its GPUs as its %1 reports them, without notebooks.',
                node.exporter
              )}
            >
              {trans.__('via %1', node.exporter)}
            </span>
          )}
          <span
            className={`jp-GpuMonitor-labNodeState${node.reporting ? '' : ' jp-mod-warn'}`}
          >
            {state}
          </span>
        </div>
        {node.gpus.length > 0 && (
          <ul className="jp-GpuMonitor-labGpus">
            {node.gpus.map(gpu => (
              <GpuCell
                key={gpu.uuid}
                gpu={gpu}
                now={props.now}
                compact={compact}
                trans={trans}
              />
            ))}
          </ul>
        )}
      </div>
    );
  }

  /**
   * A GPU as a compact cell: its index and utilisation, its memory as a
   * bar, and who holds it (the user's own marked), or "free".
   */
  function GpuCell(props: {
    gpu: ILabGpu;
    now: number;
    compact: boolean;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { gpu, compact, trans } = props;
    const share =
      gpu.memory_used_mib === null || !gpu.memory_total_mib
        ? 0
        : Math.min(1, gpu.memory_used_mib / gpu.memory_total_mib);
    const own = gpu.holders.some(holder => holder.own);
    const utilization =
      gpu.utilization_gpu === null
        ? trans.__('n/a')
        : formatPercent(gpu.utilization_gpu, trans);
    const memory =
      gpu.memory_used_mib === null || gpu.memory_total_mib === null
        ? trans.__('n/a')
        : trans.__(
            '%1 of %2',
            formatMemory(gpu.memory_used_mib, trans),
            formatMemory(gpu.memory_total_mib, trans)
          );
    // In a compact cell the user's own is marked by its colour alone.
    const holders = gpu.holders.map(holder =>
      holder.own && !compact ? trans.__('%1 (you)', holder.user) : holder.user
    );
    // Memory held, but by no notebook of the lab's servers: a job, a
    // server without the extension.
    const who = gpu.free
      ? trans.__('free')
      : (holders[0] ?? trans.__('in use'));
    const idle =
      gpu.idle_since === null
        ? null
        : trans.__(
            'idle %1',
            formatAge(Math.max(0, props.now - gpu.idle_since), trans)
          );
    const title = [
      trans.__('GPU %1', gpu.index),
      gpu.name,
      trans.__('utilization %1', utilization),
      trans.__('memory %1', memory),
      idle,
      !gpu.free && gpu.holders.length === 0
        ? trans.__('held by no notebook of the lab')
        : null,
      ...gpu.holders.map(holder =>
        trans.__(
          '%1: %2 holds %3',
          holder.user,
          holder.notebook || trans.__('a notebook'),
          formatMemory(holder.memory_used_mib, trans)
        )
      )
    ]
      .filter(Boolean)
      .join('\n');
    return (
      <li
        className={`jp-GpuMonitor-labGpu${gpu.free ? ' jp-mod-free' : ''}${own ? ' jp-mod-own' : ''}`}
        title={title}
        aria-label={title.replace(/\n/g, ', ')}
      >
        <span className="jp-GpuMonitor-labGpuIndex">{gpu.index}</span>
        <span className="jp-GpuMonitor-labGpuUse">{utilization}</span>
        <span className="jp-GpuMonitor-labGpuBar" aria-hidden="true">
          <span style={{ width: `${(share * 100).toFixed(1)}%` }} />
        </span>
        {!compact && (
          <span className="jp-GpuMonitor-labGpuMemory">{memory}</span>
        )}
        <span className="jp-GpuMonitor-labGpuHolder">
          {compact || holders.length === 0 ? who : holders.join(', ')}
        </span>
        {!compact && idle && (
          <span className="jp-GpuMonitor-labGpuIdle">{idle}</span>
        )}
      </li>
    );
  }
}
