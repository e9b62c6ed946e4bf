import { Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';

import { MAX_MESSAGE_LENGTH, notificationText } from '../notification';
import {
  ALERT_KINDS,
  GpuAlertKind,
  IAlertThresholds,
  IGpuAlert
} from './alerts';
import { holderActions } from './alertActions';
import { IKernelSummary } from '../restapi/kernels';
import { KERNEL_CPU_BUSY_PERCENT } from '../restapi/rules';
import { kernelLabel } from '../gpu/processes';
import { formatList, formatMemory, formatPercent } from '../format/units';

/**
 * How the notification of a kind of alert reads, and what it offers.
 */
export interface IAlertNotice {
  /**
   * Its type: an error stays until closed, a warning closes by itself.
   */
  type: 'error' | 'warning';
  /**
   * What names the GPU of a lone alert beside its index; its product name
   * where not given.
   */
  label?(alert: IGpuAlert): string | null;
  /**
   * The sentence of alerts of this kind that started together, `gpus`
   * naming their GPUs; the kernels of the server, where known, tell what a
   * holder's kernel is doing.
   */
  sentence(
    alerts: readonly IGpuAlert[],
    gpus: string,
    thresholds: IAlertThresholds,
    trans: TranslationBundle,
    kernels: readonly IKernelSummary[] | null
  ): string;
  /**
   * Its own buttons, for the alerts it names.
   */
  actions?(
    shown: readonly IGpuAlert[],
    commands: CommandRegistry,
    trans: TranslationBundle
  ): Notification.IAction[];
}

/**
 * The notification of each kind of GPU alert. It is apart from the kinds'
 * checks (`ALERTS` in `alerts.ts`) because the checks run from the start and
 * the words load with the first alert; the type makes every kind have one.
 */
export const ALERT_NOTICES: { readonly [K in GpuAlertKind]: IAlertNotice } = {
  lost: {
    // Someone must reset the GPU or reboot.
    type: 'error',
    // By the bus id the driver's messages (dmesg) name it by.
    label: alert => alert.gpuBusId,
    sentence: (alerts, gpus, thresholds, trans) =>
      alerts.length === 1
        ? trans.__(
            '%1 is lost. Check dmesg, then reset it once no process uses it (sudo nvidia-smi -r -i %2), or reboot.',
            gpus,
            alerts[0].gpuIndex
          )
        : trans.__(
            '%1 are lost. Check dmesg, then reset them once no process uses them (sudo nvidia-smi -r), or reboot.',
            gpus
          )
  },
  memory: {
    type: 'warning',
    sentence: (alerts, gpus, thresholds, trans) =>
      alerts.length === 1
        ? trans.__(
            '%1: memory %2% full, above the %3% alert threshold.',
            gpus,
            Math.round(alerts[0].value),
            thresholds.memoryPercent
          )
        : trans.__(
            '%1: memory above the %2% alert threshold.',
            gpus,
            thresholds.memoryPercent
          )
  },
  temperature: {
    type: 'warning',
    sentence: (alerts, gpus, thresholds, trans) =>
      alerts.length === 1
        ? trans.__(
            '%1: %2 °C, above the %3 °C alert threshold.',
            gpus,
            Math.round(alerts[0].value),
            thresholds.temperatureCelsius
          )
        : trans.__(
            '%1: above the %2 °C alert threshold.',
            gpus,
            thresholds.temperatureCelsius
          )
  },
  slowdown: {
    type: 'warning',
    sentence: (alerts, gpus, thresholds, trans) =>
      alerts.length === 1
        ? trans.__(
            '%1 slows down: %2. Its clocks are held down until it is fixed.',
            gpus,
            Private.slowdownCause(alerts[0], trans)
          )
        : trans.__('%1 slow down: their clocks are held down.', gpus)
  },
  lowUtilization: {
    type: 'warning',
    sentence: (alerts, gpus, thresholds, trans, kernels) => {
      const [first] = alerts;
      // One holder on all of them (a notebook on several GPUs) is named
      // with what it holds on all.
      const holders = new Set(alerts.map(alert => alert.holder?.kernelId));
      const oneHolder =
        alerts.length === 1 || (holders.size === 1 && !!first.holder?.kernelId);
      const held = alerts.reduce<number | null>(
        (sum, alert) =>
          sum === null || alert.memoryUsedMiB === null
            ? null
            : sum + alert.memoryUsedMiB,
        0
      );
      return oneHolder && held !== null
        ? Private.idleSentence(first, held, gpus, thresholds, kernels, trans)
        : trans.__(
            '%1: under %2% busy for %3 min while holding memory.',
            gpus,
            thresholds.lowUtilizationPercent,
            thresholds.lowUtilizationMinutes
          );
    },
    actions: holderActions
  }
};

/**
 * The notification text of alerts of one kind that started together: which
 * GPUs, what was read and the threshold; at most
 * {@link MAX_MESSAGE_LENGTH} characters.
 */
export function alertMessage(
  alerts: readonly IGpuAlert[],
  thresholds: IAlertThresholds,
  trans: TranslationBundle,
  kernels: readonly IKernelSummary[] | null = null
): string {
  const [first] = alerts;
  const notice = ALERT_NOTICES[first.kind];
  const label = notice.label ? notice.label(first) : first.gpuName;
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
    .map(gpus => notice.sentence(alerts, gpus, thresholds, trans, kernels));
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
  trans: TranslationBundle,
  kernels: readonly IKernelSummary[] | null = null
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
      return {
        kind,
        alerts,
        message: alertMessage(alerts, thresholds, trans, kernels)
      };
    });
}

/**
 * File-local parts of the messages.
 */
namespace Private {
  /**
   * A GPU idle for minutes while memory is held: who holds it, how much and
   * for how long, and why by the rule a cell's line uses: the kernel idle
   * between runs, or busy with its CPU preparing data, or busy waiting on
   * something else.
   */
  export function idleSentence(
    alert: IGpuAlert,
    heldMiB: number,
    gpus: string,
    thresholds: IAlertThresholds,
    kernels: readonly IKernelSummary[] | null,
    trans: TranslationBundle
  ): string {
    const held = formatMemory(heldMiB, trans);
    const minutes = thresholds.lowUtilizationMinutes;
    const busy = thresholds.lowUtilizationPercent;
    const kernelId = alert.holder?.kernelId ?? null;
    if (kernelId === null) {
      return trans.__(
        "%1: another user's process has held %2 for %3 min under %4% busy.",
        gpus,
        held,
        minutes,
        busy
      );
    }
    const label = kernelLabel(kernelId, alert.holder?.path ?? null, trans);
    const kernel = kernels?.find(each => each.kernel_id === kernelId);
    if (kernel?.execution_state !== 'busy') {
      return trans.__(
        '%1: %2 has held %3 for %4 min under %5% busy; its kernel is idle between runs.',
        gpus,
        label,
        held,
        minutes,
        busy
      );
    }
    const cpu = kernel.cpu_percent;
    return cpu !== null && cpu >= KERNEL_CPU_BUSY_PERCENT
      ? trans.__(
          '%1: %2 has held %3 for %4 min under %5% busy while its kernel prepares data (CPU %6).',
          gpus,
          label,
          held,
          minutes,
          busy,
          formatPercent(cpu, trans)
        )
      : trans.__(
          '%1: %2 has held %3 for %4 min under %5% busy while its kernel waits on something else.',
          gpus,
          label,
          held,
          minutes,
          busy
        );
  }

  /**
   * Why a GPU slowed down, in a few words: "thermal slowdown at 91 °C".
   */
  export function slowdownCause(
    alert: IGpuAlert,
    trans: TranslationBundle
  ): string {
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
