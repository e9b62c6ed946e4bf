import { TranslationBundle } from '@jupyterlab/translation';

import { MAX_MESSAGE_LENGTH, notificationText } from '../notification';
import {
  ALERT_KINDS,
  GpuAlertKind,
  IAlertThresholds,
  IGpuAlert
} from './alerts';
import { formatList, formatMemory } from './units';

/**
 * The notification text of alerts of one kind that started together: which
 * GPUs, what was read and the threshold; at most
 * {@link MAX_MESSAGE_LENGTH} characters.
 */
export function alertMessage(
  alerts: readonly IGpuAlert[],
  thresholds: IAlertThresholds,
  trans: TranslationBundle
): string {
  const [first] = alerts;
  // A lost GPU by the bus id the driver's messages (dmesg) name it by.
  const label = first.kind === 'lost' ? first.gpuBusId : first.gpuName;
  const named =
    alerts.length === 1 && label
      ? trans.__('GPU %1 (%2)', first.gpuIndex, label)
      : null;
  const bare =
    alerts.length === 1
      ? trans.__('GPU %1', first.gpuIndex)
      : trans.__(
          'GPUs %1',
          formatList(
            alerts.map(alert => String(alert.gpuIndex)),
            trans
          )
        );
  const candidates = [named, bare]
    .filter((gpus): gpus is string => gpus !== null)
    .map(gpus =>
      Private.sentence(first, alerts.length, gpus, thresholds, trans)
    );
  const message =
    candidates.find(text => text.length <= MAX_MESSAGE_LENGTH) ??
    candidates[candidates.length - 1];
  return notificationText(message);
}

/**
 * The notification of each kind of alert that started: it names the GPUs
 * whose alerts of that kind just started, and those the notification of
 * that kind named before whose episodes are still under way, since it
 * replaces that notification and must not drop a GPU that is, say, still
 * too hot. In the order of the GPUs.
 */
export function alertNotices(
  started: readonly IGpuAlert[],
  shownBefore: ReadonlyMap<GpuAlertKind, readonly IGpuAlert[]>,
  stillFiring: (alert: IGpuAlert) => boolean,
  thresholds: IAlertThresholds,
  trans: TranslationBundle
): { kind: GpuAlertKind; alerts: IGpuAlert[]; message: string }[] {
  return ALERT_KINDS.map(kind => started.filter(alert => alert.kind === kind))
    .filter(fresh => fresh.length > 0)
    .map(fresh => {
      const kind = fresh[0].kind;
      const renewed = new Set(fresh.map(alert => alert.gpuKey));
      const alerts = [
        ...(shownBefore.get(kind) ?? []).filter(
          alert => !renewed.has(alert.gpuKey) && stillFiring(alert)
        ),
        ...fresh
      ].sort((a, b) => a.gpuIndex - b.gpuIndex);
      return { kind, alerts, message: alertMessage(alerts, thresholds, trans) };
    });
}

/**
 * File-local parts of the messages.
 */
namespace Private {
  /**
   * The notification sentence of alerts of one kind.
   */
  export function sentence(
    first: IGpuAlert,
    count: number,
    gpus: string,
    thresholds: IAlertThresholds,
    trans: TranslationBundle
  ): string {
    switch (first.kind) {
      case 'lost':
        return count === 1
          ? trans.__(
              '%1 is lost. Check dmesg, then reset it once no process uses it (sudo nvidia-smi -r -i %2), or reboot.',
              gpus,
              first.gpuIndex
            )
          : trans.__(
              '%1 are lost. Check dmesg, then reset them once no process uses them (sudo nvidia-smi -r), or reboot.',
              gpus
            );
      case 'memory':
        return count === 1
          ? trans.__(
              '%1: memory %2% full, above the %3% alert threshold.',
              gpus,
              Math.round(first.value),
              thresholds.memoryPercent
            )
          : trans.__(
              '%1: memory above the %2% alert threshold.',
              gpus,
              thresholds.memoryPercent
            );
      case 'temperature':
        return count === 1
          ? trans.__(
              '%1: %2 °C, above the %3 °C alert threshold.',
              gpus,
              Math.round(first.value),
              thresholds.temperatureCelsius
            )
          : trans.__(
              '%1: above the %2 °C alert threshold.',
              gpus,
              thresholds.temperatureCelsius
            );
      case 'slowdown':
        return count === 1
          ? trans.__(
              '%1 slows down: %2. Its clocks are held down until it is fixed.',
              gpus,
              slowdownCause(first, trans)
            )
          : trans.__('%1 slow down: their clocks are held down.', gpus);
      case 'lowUtilization':
        return count === 1 && first.memoryUsedMiB !== null
          ? trans.__(
              '%1: under %2% busy for %3 min while holding %4. Waiting on data?',
              gpus,
              thresholds.lowUtilizationPercent,
              thresholds.lowUtilizationMinutes,
              formatMemory(first.memoryUsedMiB, trans)
            )
          : trans.__(
              '%1: under %2% busy for %3 min while holding memory. Waiting on data?',
              gpus,
              thresholds.lowUtilizationPercent,
              thresholds.lowUtilizationMinutes
            );
    }
  }

  /**
   * Why a GPU slowed down, in a few words: "thermal slowdown at 91 °C".
   */
  function slowdownCause(alert: IGpuAlert, trans: TranslationBundle): string {
    switch (alert.reason) {
      case 'hw_power_brake_slowdown':
        return trans.__('power brake slowdown');
      case 'hw_slowdown':
        return trans.__('hardware slowdown');
      default:
        return Number.isNaN(alert.value)
          ? trans.__('thermal slowdown')
          : trans.__('thermal slowdown at %1 °C', Math.round(alert.value));
    }
  }
}
