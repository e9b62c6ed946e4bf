import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { formatMemory } from '../gpu/units';
import { IGpuProcess } from '../tokens';

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
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The processes running on one GPU: pid, user, name, GPU memory, and the
 * kernel or notebook they belong to where the server knows it.
 */
export function ProcessTable(props: ProcessTable.IProps): React.ReactElement {
  const { gpuIndex, processes, trans } = props;
  return (
    <table
      className="jp-GpuMonitor-processes"
      aria-label={trans.__('Processes on GPU %1', gpuIndex)}
    >
      <colgroup>
        <col className="jp-GpuMonitor-pidColumn" />
        <col className="jp-GpuMonitor-userColumn" />
        <col />
        <col className="jp-GpuMonitor-memoryColumn" />
        <col />
      </colgroup>
      <thead>
        <tr>
          <th scope="col">{trans.__('PID')}</th>
          <th scope="col">{trans.__('User')}</th>
          <th scope="col">{trans.__('Process')}</th>
          <th scope="col">{trans.__('Memory')}</th>
          <th scope="col">{trans.__('Kernel / notebook')}</th>
        </tr>
      </thead>
      <tbody>
        {processes.length === 0 ? (
          <tr>
            <td colSpan={5} className="jp-GpuMonitor-empty">
              {trans.__('No process is using this GPU.')}
            </td>
          </tr>
        ) : (
          processes.map(process => (
            <tr key={`${process.pid}-${process.gpu_instance_id}`}>
              <td>{process.pid}</td>
              <td title={process.user ?? ''}>{process.user ?? ''}</td>
              <td
                className="jp-GpuMonitor-processName"
                title={process.name ?? ''}
              >
                {Private.baseName(process.name ?? '')}
              </td>
              <td>
                {process.used_memory_mib === null
                  ? trans.__('n/a')
                  : formatMemory(process.used_memory_mib, trans)}
              </td>
              <td title={process.session_path ?? ''}>
                {process.session_path ?? ''}
              </td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The last part of a path, Linux or Windows: the program's name.
   */
  export function baseName(path: string): string {
    return path.split(/[\\/]/).pop() ?? path;
  }
}
