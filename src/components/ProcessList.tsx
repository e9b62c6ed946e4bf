import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { ProcessOwner, processOwner, sortProcesses } from '../gpu/processes';
import { formatAge, formatMemory, formatPercent } from '../gpu/units';
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
 * own kernels first: the GPU, the notebook each belongs to (a link that
 * opens it, with buttons that interrupt or shut down the user's own
 * kernels) or the user who runs it, its pid and age under it, and its GPU
 * memory. Three columns, so that a notebook's name is not cut at the
 * sidebar's default width.
 */
export function ProcessList(props: ProcessList.IProps): React.ReactElement {
  const { gpus, now, actions, trans } = props;
  const entries = sortProcesses(gpus);
  const omitted = gpus.reduce((sum, gpu) => sum + gpu.processes_omitted, 0);
  return (
    <table
      className="jp-GpuMonitor-processes"
      aria-label={trans.__('Processes on the GPUs')}
    >
      <thead>
        <tr>
          <th scope="col" title={trans.__('The GPU the process runs on')}>
            {trans.__('GPU')}
          </th>
          <th
            scope="col"
            title={trans.__(
              'The notebook whose kernel runs the process, or the user who runs it; its process id and how long it has run'
            )}
          >
            {trans.__('Process')}
          </th>
          <th scope="col" className="jp-GpuMonitor-number">
            {trans.__('Memory')}
          </th>
        </tr>
      </thead>
      <tbody>
        {entries.length === 0 ? (
          <tr>
            <td colSpan={3} className="jp-GpuMonitor-empty">
              {trans.__('No process is using a GPU.')}
            </td>
          </tr>
        ) : (
          entries.map(({ gpuIndex, process }) => {
            const owner = processOwner(process);
            return (
              <tr
                key={`${gpuIndex}-${process.pid}-${process.gpu_instance_id}`}
                className={
                  owner.kind === 'kernel' && owner.own ? 'jp-mod-own' : ''
                }
              >
                <td className="jp-GpuMonitor-number">{gpuIndex}</td>
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
                <td className="jp-GpuMonitor-number">
                  {process.used_memory_mib === null
                    ? trans.__('n/a')
                    : formatMemory(process.used_memory_mib, trans)}
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
