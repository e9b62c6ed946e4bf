import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { ProcessOwner, processOwner } from '../gpu/processes';
import {
  formatGpuIndices,
  IGpuProcessRow,
  processRows,
  ProcessSort
} from '../gpu/processRows';
import {
  formatAge,
  formatMemory,
  formatPercent,
  formatSentences
} from '../format/units';
import { IGpu, IGpuProcess } from '../restapi/gpus';
import { IPanelActions } from './actions';
import { KernelOwner } from './KernelOwner';

/**
 * The properties of {@link ProcessList}.
 */
export namespace ProcessList {
  /**
   * The properties of {@link ProcessList}.
   */
  export interface IProps {
    /**
     * The GPUs, with the processes running on each.
     */
    gpus: readonly IGpu[];
    /**
     * When the processes were read, in seconds since the epoch (the
     * server's clock, as their start times).
     */
    now: number;
    /**
     * What the links and buttons do.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The processes running on the GPUs, in one table below them, the user's
 * own kernels first: the GPUs, the notebook each belongs to (a link that
 * opens it, with buttons that interrupt or shut down the user's own
 * kernels) or the user who runs it, its pid and age under it, and its GPU
 * memory. Three columns, so that a notebook's name is not cut at the
 * sidebar's default width. A process on several GPUs is one row; a click on
 * a column's head sorts by it, a second click goes back to the owners'
 * order.
 */
export function ProcessList(props: ProcessList.IProps): React.ReactElement {
  const { gpus, now, actions, trans } = props;
  const [sort, setSort] = React.useState<ProcessSort>('owner');
  const rows = processRows(gpus, sort);
  const omitted = gpus.reduce((sum, gpu) => sum + gpu.processes_omitted, 0);
  const head = (column: ProcessSort, label: string, title: string) => (
    <Private.SortableHead
      column={column}
      sort={sort}
      onSort={setSort}
      label={label}
      title={title}
      trans={trans}
    />
  );
  return (
    <table
      className="jp-GpuMonitor-processes"
      aria-label={trans.__('Processes on the GPUs')}
    >
      <thead>
        <tr>
          {head(
            'gpu',
            trans.__('GPU'),
            trans.__('The GPUs the process runs on.')
          )}
          {head(
            'owner',
            trans.__('Process'),
            trans.__(
              'The notebook whose kernel runs the process, or the user who runs it; its process id and how long it has run.'
            )
          )}
          {head(
            'memory',
            trans.__('Memory'),
            trans.__('The GPU memory it holds, on all its GPUs.')
          )}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={3} className="jp-GpuMonitor-empty">
              {trans.__('No process is using a GPU.')}
            </td>
          </tr>
        ) : (
          rows.map(row => {
            const { process } = row;
            const owner = processOwner(process);
            return (
              <tr
                key={`${process.pid}-${process.gpu_instance_id}`}
                className={
                  owner.kind === 'kernel' && owner.own ? 'jp-mod-own' : ''
                }
              >
                <td className="jp-GpuMonitor-number">
                  {formatGpuIndices(row.gpuIndices)}
                </td>
                <td className="jp-GpuMonitor-owner">
                  <Private.Owner
                    owner={owner}
                    process={process}
                    actions={actions}
                    trans={trans}
                  />
                  <span
                    className="jp-GpuMonitor-processDetail"
                    title={process.command ?? undefined}
                  >
                    {Private.detail(process, now, trans)}
                  </span>
                </td>
                <td
                  className="jp-GpuMonitor-number"
                  title={Private.memoryByGpu(row, trans)}
                >
                  {row.memoryMiB === null
                    ? trans.__('n/a')
                    : formatMemory(row.memoryMiB, trans)}
                </td>
              </tr>
            );
          })
        )}
        {omitted > 0 && (
          <tr>
            <td colSpan={3} className="jp-GpuMonitor-empty">
              {trans._n(
                '%1 more process, holding less memory, is not shown.',
                '%1 more processes, holding less memory, are not shown.',
                omitted
              )}
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

/**
 * File-local parts of the table.
 */
namespace Private {
  /**
   * A column's head: a button that sorts the table by the column, and back
   * to the owners' order when it already does.
   */
  export function SortableHead(props: {
    column: ProcessSort;
    sort: ProcessSort;
    onSort: (sort: ProcessSort) => void;
    label: string;
    title: string;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { column, sort, onSort, label, title, trans } = props;
    const sorted = sort === column;
    // GPUs go up from 0; memory down from the most; owners in their order.
    const direction =
      column === 'memory'
        ? 'descending'
        : column === 'gpu'
          ? 'ascending'
          : 'other';
    return (
      <th
        scope="col"
        className={column === 'memory' ? 'jp-GpuMonitor-number' : undefined}
        aria-sort={sorted ? direction : 'none'}
      >
        <button
          type="button"
          className="jp-GpuMonitor-sortButton"
          title={formatSentences(
            title,
            sorted && column !== 'owner'
              ? trans.__('Click to sort by owner again.')
              : trans.__('Click to sort by this column.'),
            trans
          )}
          onClick={() => onSort(sorted ? 'owner' : column)}
        >
          {label}
          {sorted &&
            { ascending: ' ↑', descending: ' ↓', other: '' }[direction]}
        </button>
      </th>
    );
  }

  /**
   * What a process on several GPUs holds on each: "GPU 0: 21.9 GiB · GPU
   * 1: 16.8 GiB"; nothing for one GPU.
   */
  export function memoryByGpu(
    row: IGpuProcessRow,
    trans: TranslationBundle
  ): string | undefined {
    if (row.gpuIndices.length < 2) {
      return undefined;
    }
    return row.gpuIndices
      .map((index, at) => {
        const mib = row.memoryByGpu[at];
        return trans.__(
          'GPU %1: %2',
          index,
          mib === null ? trans.__('n/a') : formatMemory(mib, trans)
        );
      })
      .join(' · ');
  }

  /**
   * Who a process belongs to: the notebook link, "alice · python", or why
   * it is not known.
   */
  export function Owner(props: {
    owner: ProcessOwner;
    process: IGpuProcess;
    actions: IPanelActions;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { owner, process, actions, trans } = props;
    switch (owner.kind) {
      case 'kernel':
        return (
          <KernelOwner
            kernelId={owner.kernelId}
            path={owner.path}
            withButtons={owner.own}
            actions={actions}
            trans={trans}
          />
        );
      case 'user': {
        const name = process.name ? baseName(process.name) : null;
        const text = [owner.user ?? trans.__('unknown user'), name]
          .filter(Boolean)
          .join(' · ');
        return (
          <span title={process.command ?? process.name ?? text}>{text}</span>
        );
      }
      case 'invisible':
        return (
          <span
            className="jp-GpuMonitor-invisible"
            title={trans.__(
              'The driver reports a process id that this server cannot see: it runs in another container or on the host.'
            )}
          >
            {trans.__('not visible here')}
          </span>
        );
      case 'unknown':
        return <span>{process.name ? baseName(process.name) : ''}</span>;
    }
  }

  /**
   * "pid 4242 · GI 3 · 12 min · GPU 85 % · CPU 12 % · RAM 1.2 GiB", under
   * the owner: its MIG instance when it runs on one, its share of the GPU
   * where NVML measures it, and for the user's own processes what they use
   * of the machine (their command line on hover).
   */
  export function detail(
    process: IGpuProcess,
    now: number,
    trans: TranslationBundle
  ): string {
    return [
      trans.__('pid %1', process.pid),
      process.gpu_instance_id !== null &&
        trans.__('GI %1', process.gpu_instance_id),
      process.started !== null && formatAge(now - process.started, trans),
      process.utilization_gpu !== null &&
        trans.__('GPU %1', formatPercent(process.utilization_gpu, trans)),
      process.cpu_percent !== null &&
        trans.__('CPU %1', formatPercent(process.cpu_percent, trans)),
      process.host_memory_mib !== null &&
        trans.__('RAM %1', formatMemory(process.host_memory_mib, trans))
    ]
      .filter(Boolean)
      .join(' · ');
  }

  /**
   * The last part of a path, Linux or Windows: the program's name.
   */
  function baseName(path: string): string {
    return path.split(/[\\/]/).pop() ?? path;
  }
}
