import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { ProcessOwner, processOwner, sortProcesses } from '../gpu/processes';
import { formatAge, formatMemory } from '../gpu/units';
import { IGpuProcess } from '../restapi/gpus';
import { IPanelActions } from './actions';
import { KernelOwner } from './KernelOwner';

/**
 * The properties of {@link ProcessTable}.
 */
export namespace ProcessTable {
  /**
   * The properties of {@link ProcessTable}.
   */
  export interface IProps {
    /**
     * The GPU's index.
     */
    gpuIndex: number;
    /**
     * The processes running on the GPU.
     */
    processes: readonly IGpuProcess[];
    /**
     * How many more processes the server left out (those holding the least
     * memory).
     */
    omitted: number;
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
 * The processes running on one GPU, the user's own kernels first: the
 * notebook each belongs to (a link that opens it, with buttons that
 * interrupt or shut down the user's own kernels) or the user who runs it,
 * its GPU memory and its age.
 */
export function ProcessTable(props: ProcessTable.IProps): React.ReactElement {
  const { gpuIndex, processes, omitted, now, actions, trans } = props;
  return (
    <table
      className="jp-GpuMonitor-processes"
      aria-label={trans.__('Processes on GPU %1', gpuIndex)}
    >
      <colgroup>
        <col className="jp-GpuMonitor-pidColumn" />
        <col />
        <col className="jp-GpuMonitor-memoryColumn" />
        <col className="jp-GpuMonitor-ageColumn" />
      </colgroup>
      <thead>
        <tr>
          <th scope="col">{trans.__('PID')}</th>
          <th
            scope="col"
            title={trans.__(
              'The notebook whose kernel runs the process, or the user who runs it'
            )}
          >
            {trans.__('Owner')}
          </th>
          <th scope="col">{trans.__('Memory')}</th>
          <th scope="col">{trans.__('Age')}</th>
        </tr>
      </thead>
      <tbody>
        {processes.length === 0 ? (
          <tr>
            <td colSpan={4} className="jp-GpuMonitor-empty">
              {trans.__('No process is using this GPU.')}
            </td>
          </tr>
        ) : (
          sortProcesses(processes).map(process => {
            const owner = processOwner(process);
            return (
              <tr
                key={`${process.pid}-${process.gpu_instance_id}`}
                className={
                  owner.kind === 'kernel' && owner.own ? 'jp-mod-own' : ''
                }
              >
                <td title={process.name ?? ''}>{process.pid}</td>
                <td className="jp-GpuMonitor-owner">
                  <Private.Owner
                    owner={owner}
                    process={process}
                    actions={actions}
                    trans={trans}
                  />
                </td>
                <td>
                  {process.used_memory_mib === null
                    ? trans.__('n/a')
                    : formatMemory(process.used_memory_mib, trans)}
                </td>
                <td>
                  {process.started === null
                    ? ''
                    : formatAge(now - process.started, trans)}
                </td>
              </tr>
            );
          })
        )}
        {omitted > 0 && (
          <tr>
            <td colSpan={4} className="jp-GpuMonitor-empty">
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
        return <span title={process.name ?? text}>{text}</span>;
      }
      case 'invisible':
        return (
          <span
            className="jp-GpuMonitor-invisible"
            title={trans.__(
              'The driver reports a process id that this server cannot see: it runs in another container or on the host.'
            )}
          >
            {trans.__('not visible from this container')}
          </span>
        );
      case 'unknown':
        return <span>{process.name ? baseName(process.name) : ''}</span>;
    }
  }

  /**
   * The last part of a path, Linux or Windows: the program's name.
   */
  function baseName(path: string): string {
    return path.split(/[\\/]/).pop() ?? path;
  }
}
