import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { gpuConditions, IGpuCondition } from '../gpu/conditions';
import { isNearlyFull } from '../gpu/fullness';
import { shortGpuName } from '../gpu/names';
import { gpuHolder } from '../gpu/processRows';
import {
  formatCelsius,
  formatEnergy,
  formatMemoryOf,
  formatPercent,
  formatRate,
  formatWatts,
  formatWattsOf
} from '../format/units';
import { IKernelGpus } from '../tokens';
import { IGpu, IMigDevice } from '../restapi/gpus';
import { MeterBar } from './MeterBar';
import { MonitorMessage } from './MonitorMessage';
import { SeriesSwatch } from './SeriesSwatch';

/**
 * The properties of {@link GpuRow}.
 */
export namespace GpuRow {
  /**
   * The properties of {@link GpuRow}.
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
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * One GPU in two dense lines: its index and short name with its
 * temperature and power, then bars for utilisation and memory with their
 * numbers; its MIG instances under them, and a line for each condition that
 * slows it down or makes its results doubtful. The full name, the clocks,
 * the video engines, the memory's errors, what is normal under load, the
 * fan and the bus id are its tooltip.
 */
export function GpuRow(props: GpuRow.IProps): React.ReactElement {
  const { gpu, kernelGpus, trans } = props;
  const visibleToKernel = kernelGpus?.indices.includes(gpu.index) ?? false;
  const headingId = `jp-GpuMonitor-gpu-${gpu.uuid ?? gpu.index}`;
  const missing = (field: keyof IGpu): string =>
    Private.missingReading(gpu, field, trans);
  const memoryKnown =
    gpu.memory_used_mib !== null && gpu.memory_total_mib !== null;
  const fullName = trans.__('GPU %1', gpu.index) + ' ' + (gpu.name ?? '');
  const conditions = gpuConditions(gpu, trans);
  const shown = conditions.filter(condition => condition.severity !== 'info');
  const details = Private.details(
    gpu,
    conditions.filter(condition => condition.severity === 'info'),
    kernelGpus,
    visibleToKernel,
    trans
  );
  const detailsId = `${headingId}-details`;
  const holder = gpuHolder(gpu, trans);
  // Focusable, so that what the tooltip tells, and what to do about each
  // condition, is reached from the keyboard too: listed under the row while
  // it has the focus (shown only for the keyboard's), as its description.
  const [focused, setFocused] = React.useState(false);
  return (
    <article
      className={`jp-GpuMonitor-gpu${visibleToKernel ? ' jp-mod-kernelVisible' : ''}`}
      aria-labelledby={headingId}
      aria-describedby={focused ? detailsId : undefined}
      tabIndex={0}
      title={details.join('\n')}
      onFocus={event => setFocused(event.target === event.currentTarget)}
      onBlur={() => setFocused(false)}
    >
      <div className="jp-GpuMonitor-gpuHead">
        <h3
          id={headingId}
          className="jp-GpuMonitor-gpuTitle"
          aria-label={fullName.trim()}
        >
          <SeriesSwatch gpuIndex={gpu.index} />
          {trans.__('GPU %1', gpu.index)}
          {gpu.name && (
            <span className="jp-GpuMonitor-gpuName">
              {shortGpuName(gpu.name)}
            </span>
          )}
        </h3>
        {holder !== null && (
          <span
            className="jp-GpuMonitor-gpuHolder"
            title={trans.__(
              'Who holds GPU %1: the owner of the process with the most memory on it, and how many others do',
              gpu.index
            )}
          >
            {holder}
          </span>
        )}
        <span className="jp-GpuMonitor-gpuFacts">
          <span
            title={gpu.unavailable.temperature_c ?? trans.__('Temperature')}
          >
            {gpu.temperature_c === null
              ? missing('temperature_c')
              : formatCelsius(gpu.temperature_c, trans)}
          </span>
          <span
            title={
              gpu.unavailable.power_draw_w ??
              trans.__('Power draw out of the limit')
            }
          >
            {Private.power(gpu, trans) ?? missing('power_draw_w')}
          </span>
        </span>
      </div>
      <div className="jp-GpuMonitor-gpuMeters">
        <MeterBar
          label={trans.__('Utilization')}
          value={gpu.utilization_gpu}
          max={100}
          text={
            gpu.utilization_gpu === null
              ? missing('utilization_gpu')
              : formatPercent(gpu.utilization_gpu, trans)
          }
          shown={
            gpu.utilization_gpu === null && gpu.mig_mode === 'enabled'
              ? trans.__('MIG')
              : undefined
          }
          title={gpu.unavailable.utilization_gpu}
        />
        <MeterBar
          label={trans.__('Memory')}
          value={gpu.memory_used_mib}
          max={gpu.memory_total_mib ?? 0}
          text={
            memoryKnown
              ? formatMemoryOf(
                  gpu.memory_used_mib!,
                  gpu.memory_total_mib!,
                  trans
                )
              : missing('memory_used_mib')
          }
          title={gpu.unavailable.memory_used_mib}
          warning={
            isNearlyFull(gpu.memory_used_mib, gpu.memory_total_mib)
              ? trans.__('nearly full')
              : null
          }
        />
        {gpu.mig_devices.length > 0 && (
          <Private.MigInstances gpu={gpu} trans={trans} />
        )}
      </div>
      {shown.length > 0 && (
        <ul
          className="jp-GpuMonitor-gpuConditions"
          aria-label={trans.__('Conditions of GPU %1', gpu.index)}
        >
          {shown.map(condition => (
            <li
              key={condition.text}
              className={`jp-GpuMonitor-gpuCondition jp-mod-${condition.severity}`}
              title={condition.hint}
            >
              {condition.text}
            </li>
          ))}
        </ul>
      )}
      {gpu.error && <MonitorMessage problem={gpu.error} trans={trans} />}
      {focused && (
        <ul id={detailsId} className="jp-GpuMonitor-gpuDetails">
          {[
            ...details,
            ...shown
              .filter(condition => condition.hint)
              .map(condition =>
                trans.__('%1: %2', condition.text, condition.hint)
              )
          ].map(line => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </article>
  );
}

/**
 * File-local parts of the row.
 */
namespace Private {
  /**
   * What to say for a reading the GPU does not give: "n/a under MIG" when
   * MIG is why (the server's reason is the title), "n/a" otherwise.
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
   * What the row leaves out, a line each, on hover: the full name, the clocks
   * and performance state, the video engines, the memory's errors,
   * conditions that are normal under load, the fan, the energy used since the
   * driver loaded, the bus, and whether the notebook's kernel sees the GPU.
   */
  export function details(
    gpu: IGpu,
    normal: IGpuCondition[],
    kernelGpus: IKernelGpus | null,
    visibleToKernel: boolean,
    trans: TranslationBundle
  ): string[] {
    return [
      gpu.name,
      clocks(gpu, trans),
      videoEngines(gpu, trans),
      links(gpu, trans),
      memoryHealth(gpu, trans),
      ...normal.map(condition => condition.text),
      gpu.fan_speed_pct !== null &&
        trans.__('Fan %1', formatPercent(gpu.fan_speed_pct, trans)),
      gpu.energy_consumed_j !== null &&
        trans.__(
          '%1 since the driver loaded',
          formatEnergy(gpu.energy_consumed_j, trans)
        ),
      gpu.pci_bus_id && trans.__('Bus %1', gpu.pci_bus_id),
      visibleToKernel &&
        kernelGpus &&
        trans.__('Visible to %1', kernelGpus.label)
    ].filter((line): line is string => Boolean(line));
  }

  /**
   * "P2 · SM 1410 MHz · memory 1593 MHz", of what is known.
   */
  function clocks(gpu: IGpu, trans: TranslationBundle): string {
    return [
      gpu.performance_state,
      gpu.sm_clock_mhz !== null && trans.__('SM %1 MHz', gpu.sm_clock_mhz),
      gpu.memory_clock_mhz !== null &&
        trans.__('memory %1 MHz', gpu.memory_clock_mhz)
    ]
      .filter(Boolean)
      .join(' · ');
  }

  /**
   * The video encoder's and decoder's use, while either works.
   */
  function videoEngines(gpu: IGpu, trans: TranslationBundle): string | null {
    const { encoder_utilization: encoder, decoder_utilization: decoder } = gpu;
    if (!encoder && !decoder) {
      return null;
    }
    return trans.__(
      'Video encoder %1 · decoder %2',
      formatPercent(encoder ?? 0, trans),
      formatPercent(decoder ?? 0, trans)
    );
  }

  /**
   * What moves over the GPU's links, in each direction: "PCIe ↓ 14.4 GB/s ↑
   * 1.1 GB/s · NVLink ↓ 2.1 GB/s ↑ 2.1 GB/s", of the links it reports.
   */
  function links(gpu: IGpu, trans: TranslationBundle): string | null {
    const link = (
      name: string,
      received: number | null,
      sent: number | null
    ): string | false =>
      (received !== null || sent !== null) &&
      trans.__(
        '%1 ↓ %2 ↑ %3',
        name,
        received !== null ? formatRate(received, trans) : '–',
        sent !== null ? formatRate(sent, trans) : '–'
      );
    const parts = [
      link(
        'PCIe',
        gpu.pcie_received_bytes_per_second,
        gpu.pcie_sent_bytes_per_second
      ),
      link(
        'NVLink',
        gpu.nvlink_received_bytes_per_second,
        gpu.nvlink_sent_bytes_per_second
      )
    ].filter(Boolean);
    return parts.length > 0 ? parts.join(' · ') : null;
  }

  /**
   * The memory errors ECC corrected and the memory taken out of use, where
   * the GPU counts them.
   */
  function memoryHealth(gpu: IGpu, trans: TranslationBundle): string | null {
    const parts = [
      gpu.ecc_errors_corrected !== null &&
        trans.__('ECC: %1 corrected errors', gpu.ecc_errors_corrected),
      gpu.retired_pages !== null &&
        trans.__('%1 pages retired', gpu.retired_pages),
      gpu.remapped_rows !== null &&
        trans.__('%1 rows remapped', gpu.remapped_rows)
    ].filter(Boolean);
    return parts.length > 0 ? parts.join(' · ') : null;
  }

  /**
   * The MIG instances of a GPU, each with its memory bar under the GPU's.
   */
  export function MigInstances(props: {
    gpu: IGpu;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { gpu, trans } = props;
    return (
      <ul
        className="jp-GpuMonitor-migInstances"
        aria-label={trans.__('MIG instances of GPU %1', gpu.index)}
      >
        {gpu.mig_devices.map(device => (
          <li key={device.index} className="jp-GpuMonitor-migInstance">
            <span
              className="jp-GpuMonitor-migName"
              title={instanceIds(device, trans)}
            >
              {device.profile
                ? trans.__('MIG %1 · %2', device.index, device.profile)
                : trans.__('MIG %1', device.index)}
            </span>
            <MeterBar
              label={trans.__('Memory of MIG %1', device.index)}
              value={device.memory_used_mib}
              max={device.memory_total_mib ?? 0}
              text={instanceMemory(device, trans)}
              warning={
                isNearlyFull(device.memory_used_mib, device.memory_total_mib)
                  ? trans.__('nearly full')
                  : null
              }
            />
          </li>
        ))}
      </ul>
    );
  }

  /**
   * "GPU instance 3, compute instance 0", as `CUDA_VISIBLE_DEVICES` and
   * nvidia-smi name it.
   */
  function instanceIds(device: IMigDevice, trans: TranslationBundle): string {
    return device.gpu_instance_id === null
      ? trans.__('MIG %1', device.index)
      : trans.__(
          'GPU instance %1, compute instance %2',
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
