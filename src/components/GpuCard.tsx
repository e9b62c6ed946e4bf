import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import {
  formatCelsius,
  formatMemoryOf,
  formatPercent,
  formatWatts,
  formatWattsOf
} from '../gpu/units';
import { IKernelGpus } from '../tokens';
import { IGpu, IMigDevice } from '../restapi/gpus';
import { IPanelActions } from './actions';
import { MeterBar } from './MeterBar';
import { MonitorMessage } from './MonitorMessage';
import { ProcessTable } from './ProcessTable';
import { SeriesSwatch } from './SeriesSwatch';

/**
 * The properties of {@link GpuCard}.
 */
export namespace GpuCard {
  /**
   * The properties of {@link GpuCard}.
   */
  export interface IProps {
    /**
     * The GPU as the latest snapshot has it.
     */
    gpu: IGpu;
    /**
     * The GPUs the current notebook's kernel can see; null when unknown.
     */
    kernelGpus: IKernelGpus | null;
    /**
     * When the GPU was read, in seconds since the epoch (the server's clock).
     */
    now: number;
    /**
     * What the links and buttons of its process list do.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * One GPU: its name, bars for utilisation and memory, temperature, power and
 * fan, its MIG instances and its processes.
 */
export function GpuCard(props: GpuCard.IProps): React.ReactElement {
  const { gpu, kernelGpus, now, actions, trans } = props;
  const visibleToKernel = kernelGpus?.indices.includes(gpu.index) ?? false;
  const headingId = `jp-GpuMonitor-gpu-${gpu.uuid ?? gpu.index}`;
  const missing = (field: keyof IGpu): string =>
    Private.missingReading(gpu, field, trans);
  const memoryKnown =
    gpu.memory_used_mib !== null && gpu.memory_total_mib !== null;
  return (
    <article
      className={`jp-GpuMonitor-card${visibleToKernel ? ' jp-mod-kernelVisible' : ''}`}
      aria-labelledby={headingId}
    >
      <header className="jp-GpuMonitor-cardHeader">
        <SeriesSwatch gpuIndex={gpu.index} />
        <h3 id={headingId} className="jp-GpuMonitor-cardTitle">
          {trans.__('GPU %1', gpu.index)}{' '}
          <span className="jp-GpuMonitor-gpuName">{gpu.name ?? ''}</span>
        </h3>
        {visibleToKernel && kernelGpus && (
          <span className="jp-GpuMonitor-kernelBadge">
            {trans.__('Visible to %1', kernelGpus.label)}
          </span>
        )}
      </header>
      {gpu.error && (
        <MonitorMessage message={gpu.error.message} hint={gpu.error.hint} />
      )}
      <MeterBar
        label={trans.__('Utilization')}
        value={gpu.utilization_gpu}
        max={100}
        text={
          gpu.utilization_gpu === null
            ? missing('utilization_gpu')
            : formatPercent(gpu.utilization_gpu, trans)
        }
        title={gpu.unavailable.utilization_gpu}
      />
      <MeterBar
        label={trans.__('Memory')}
        value={gpu.memory_used_mib}
        max={gpu.memory_total_mib ?? 0}
        text={
          memoryKnown
            ? formatMemoryOf(gpu.memory_used_mib!, gpu.memory_total_mib!, trans)
            : missing('memory_used_mib')
        }
        title={gpu.unavailable.memory_used_mib}
      />
      <dl className="jp-GpuMonitor-facts">
        <dt>{trans.__('Temperature')}</dt>
        <dd title={gpu.unavailable.temperature_c}>
          {gpu.temperature_c === null
            ? missing('temperature_c')
            : formatCelsius(gpu.temperature_c, trans)}
        </dd>
        <dt>{trans.__('Power')}</dt>
        <dd title={gpu.unavailable.power_draw_w}>
          {Private.power(gpu, trans) ?? missing('power_draw_w')}
        </dd>
        <dt>{trans.__('Fan')}</dt>
        <dd title={gpu.unavailable.fan_speed_pct}>
          {gpu.fan_speed_pct === null
            ? missing('fan_speed_pct')
            : formatPercent(gpu.fan_speed_pct, trans)}
        </dd>
      </dl>
      {gpu.mig_devices.length > 0 && (
        <Private.MigTable gpu={gpu} trans={trans} />
      )}
      <ProcessTable
        gpuIndex={gpu.index}
        processes={gpu.processes}
        omitted={gpu.processes_omitted}
        now={now}
        actions={actions}
        trans={trans}
      />
    </article>
  );
}

/**
 * File-local parts of the card.
 */
namespace Private {
  /**
   * What to show for a reading the GPU does not give: "n/a under MIG" when
   * MIG is why, "n/a" otherwise (the server's reason is the title).
   */
  export function missingReading(
    gpu: IGpu,
    field: keyof IGpu,
    trans: TranslationBundle
  ): string {
    return gpu.mig_mode === 'enabled' && field in gpu.unavailable
      ? trans.__('n/a under MIG')
      : trans.__('n/a');
  }

  /**
   * The power draw out of the limit; null when the draw is not read.
   */
  export function power(gpu: IGpu, trans: TranslationBundle): string | null {
    if (gpu.power_draw_w === null) {
      return null;
    }
    return gpu.power_limit_w === null
      ? formatWatts(gpu.power_draw_w, trans)
      : formatWattsOf(gpu.power_draw_w, gpu.power_limit_w, trans);
  }

  /**
   * The MIG instances of a GPU, with their memory.
   */
  export function MigTable(props: {
    gpu: IGpu;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { gpu, trans } = props;
    return (
      <table
        className="jp-GpuMonitor-mig"
        aria-label={trans.__('MIG instances of GPU %1', gpu.index)}
      >
        <thead>
          <tr>
            <th scope="col">{trans.__('MIG instance')}</th>
            <th scope="col">{trans.__('Profile')}</th>
            <th scope="col">{trans.__('Memory')}</th>
          </tr>
        </thead>
        <tbody>
          {gpu.mig_devices.map(device => (
            <tr key={device.index}>
              <td>{instanceName(device, trans)}</td>
              <td>{device.profile ?? ''}</td>
              <td>{instanceMemory(device, trans)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }

  /**
   * "MIG 0 (GI 3, CI 0)".
   */
  function instanceName(device: IMigDevice, trans: TranslationBundle): string {
    return device.gpu_instance_id === null
      ? trans.__('MIG %1', device.index)
      : trans.__(
          'MIG %1 (GI %2, CI %3)',
          device.index,
          device.gpu_instance_id,
          device.compute_instance_id ?? '?'
        );
  }

  /**
   * The instance's memory in use out of its total.
   */
  function instanceMemory(
    device: IMigDevice,
    trans: TranslationBundle
  ): string {
    const { memory_used_mib: used, memory_total_mib: total } = device;
    return used === null || total === null
      ? trans.__('n/a')
      : formatMemoryOf(used, total, trans);
  }
}
