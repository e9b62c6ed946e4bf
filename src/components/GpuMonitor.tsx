import { TranslationBundle } from '@jupyterlab/translation';
import { downloadIcon, launchIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { runBands } from '../cells/format';
import { ChartKind } from '../charts/chartKinds';
import { reportedCharts } from '../charts/charts';
import { describeFailure, lastReadingsUnder, retryText } from '../gpu/failure';
import { formatClockTime } from '../format/units';
import { LabView } from '../lab/LabView';
import { IGpuMonitorModel, ILabModel, INotebookGpuRuns } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { IPanelActions } from './actions';
import { FreeGpuHint } from './FreeGpuHint';
import { GpuChart } from './GpuChart';
import { GpuRow } from './GpuRow';
import { KernelList } from './KernelList';
import { MachineRow } from './MachineRow';
import { MonitorMessage, snapshotMessage } from './MonitorMessage';
import { NotebookNeed } from './NotebookNeed';
import { ProcessList } from './ProcessList';
import { WindowSelect } from './WindowSelect';

/**
 * The properties of {@link GpuMonitor}.
 */
export namespace GpuMonitor {
  /**
   * The properties of {@link GpuMonitor}.
   */
  export interface IProps {
    /**
     * The model whose state is shown.
     */
    model: IGpuMonitorModel;
    /**
     * The charts shown, in order.
     */
    charts: readonly ChartKind[];
    /**
     * How far back the charts show, in seconds.
     */
    windowSeconds: number;
    /**
     * Changes when the theme changes.
     */
    themeRevision: number;
    /**
     * Called when the user picks another window.
     */
    onWindowChange: (seconds: number) => void;
    /**
     * Called when the user asks for the shown readings as CSV.
     */
    onExport: () => void;
    /**
     * The current notebook's cell runs and need; null when no notebook is
     * current.
     */
    notebook: INotebookGpuRuns | null;
    /**
     * The share of a card's memory, from 0 to 1, that must be free for the
     * least used GPU to be proposed when the notebook recorded no need.
     */
    freeGpuMinFreeShare: number;
    /**
     * Called with a cell's id when its band on a chart is clicked.
     */
    onRevealCell: (cellId: string) => void;
    /**
     * The lab's machines; null without the Lab plugin.
     */
    lab: ILabModel | null;
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
 * The GPU monitor panel: what the current notebook needs, the least used
 * GPU, the user's kernels, a row per GPU, their processes and the charts,
 * or why there is nothing to show; then, where the server names a lab's
 * Prometheus, every machine of the lab (shown on a machine without GPUs
 * too, as a login node).
 */
export function GpuMonitor(props: GpuMonitor.IProps): React.ReactElement {
  const { model, trans } = props;
  const { snapshot, failure } = model;
  const failed = failure && describeFailure(failure, trans);
  const retry = retryText(model, trans) ?? undefined;
  // The window and the export are about the charts: not shown where an
  // error, or no GPU, leaves no readings to chart.
  const charted =
    snapshot !== null &&
    ((snapshot.error === null && snapshot.gpus.length > 0) ||
      lastReadingsUnder(snapshot, model.lastReadings) !== null);
  return (
    <div className="jp-GpuMonitor-body">
      <div className="jp-GpuMonitor-header">
        <h2 className="jp-GpuMonitor-title">{trans.__('GPU Monitor')}</h2>
        {charted && (
          <WindowSelect
            seconds={props.windowSeconds}
            onChange={props.onWindowChange}
            trans={trans}
          />
        )}
        <button
          type="button"
          className="jp-GpuMonitor-iconButton"
          aria-label={trans.__('Open the GPU Dashboard')}
          title={trans.__(
            'Open the GPU Dashboard: every chart at full size, in the main area'
          )}
          onClick={() => props.actions.openDashboard()}
        >
          <launchIcon.react tag="span" />
        </button>
        {charted && (
          <button
            type="button"
            className="jp-GpuMonitor-export"
            aria-label={trans.__('Export CSV')}
            title={
              model.history.timestamps.length === 0
                ? trans.__('No readings to export yet')
                : trans.__('Export the readings the charts show as CSV')
            }
            disabled={model.history.timestamps.length === 0}
            onClick={props.onExport}
          >
            <downloadIcon.react tag="span" />
          </button>
        )}
      </div>
      {failed && (
        <MonitorMessage problem={failed} retry={retry} trans={trans} />
      )}
      {snapshot === null ? (
        !failure && (
          <p className="jp-GpuMonitor-loading" role="status">
            {trans.__('Reading the GPUs…')}
          </p>
        )
      ) : (
        <Private.Readings
          {...props}
          snapshot={snapshot}
          stale={!!failure}
          retry={retry}
        />
      )}
      {props.lab?.configured && (
        <LabView
          view={props.lab.view}
          failure={props.lab.failure}
          compact={true}
          room={{
            need: props.notebook?.need ?? null,
            minFreeShare: props.freeGpuMinFreeShare
          }}
          onOpenTab={() => props.actions.openLab()}
          trans={trans}
        />
      )}
    </div>
  );
}

/**
 * File-local parts of the panel.
 */
namespace Private {
  /**
   * What the latest snapshot says: the server's error, or the GPUs.
   */
  export function Readings(
    props: GpuMonitor.IProps & {
      snapshot: IGpuSnapshot;
      stale: boolean;
      retry?: string;
    }
  ): React.ReactElement {
    const { model, stale, notebook, actions, trans } = props;
    const revision = notebook?.revision;
    const bands = React.useMemo(
      () => (notebook ? runBands(notebook.runs) : []),
      [notebook, revision]
    );
    const message = snapshotMessage(props.snapshot, trans, props.retry);
    // The GPUs worked and now fail (a driver that fell over): the last
    // readings stay, greyed, under the error.
    const last = message
      ? lastReadingsUnder(props.snapshot, model.lastReadings)
      : null;
    // The machine is read whatever the GPUs did: fresh under a stale row.
    const machine = props.snapshot.machine;
    if (message && !last) {
      return (
        <>
          {message}
          {machine && (
            <section
              className="jp-GpuMonitor-gpus"
              aria-label={trans.__('The machine')}
            >
              <MachineRow machine={machine} trans={trans} />
            </section>
          )}
        </>
      );
    }
    const snapshot = last ?? props.snapshot;
    const facts = [
      snapshot.driver_version && trans.__('Driver %1', snapshot.driver_version),
      snapshot.cuda_version && trans.__('CUDA %1', snapshot.cuda_version),
      snapshot.source && trans.__('read with %1', snapshot.source)
    ].filter(Boolean);
    if (last) {
      facts.unshift(
        trans.__('Last readings at %1', formatClockTime(last.timestamp, true))
      );
    }
    return (
      <>
        {message}
        <div
          className={`jp-GpuMonitor-readings${stale || last ? ' jp-mod-stale' : ''}`}
        >
          <p className="jp-GpuMonitor-driver">{facts.join(' · ')}</p>
          {/* The GPUs first: an 8-GPU server fits the first screen. */}
          <section className="jp-GpuMonitor-gpus" aria-label={trans.__('GPUs')}>
            <div className="jp-GpuMonitor-gpuColumns" aria-hidden="true">
              <span>{trans.__('Utilization')}</span>
              <span>{trans.__('Memory')}</span>
            </div>
            {snapshot.gpus.map(gpu => (
              <GpuRow
                key={gpu.uuid ?? gpu.index}
                gpu={gpu}
                kernelGpus={model.kernelGpus}
                trans={trans}
              />
            ))}
            {machine && <MachineRow machine={machine} trans={trans} />}
          </section>
          {notebook && !last && (
            <NotebookNeed
              notebook={notebook}
              snapshot={snapshot}
              kernelGpus={model.kernelGpus}
              actions={actions}
              trans={trans}
            />
          )}
          {!last && (
            <FreeGpuHint
              snapshot={snapshot}
              history={model.history}
              kernelId={notebook?.kernelId ?? null}
              room={{
                need: notebook?.need ?? null,
                minFreeShare: props.freeGpuMinFreeShare
              }}
              actions={actions}
              trans={trans}
            />
          )}
          <ProcessList
            gpus={snapshot.gpus}
            now={snapshot.timestamp}
            actions={actions}
            trans={trans}
          />
          {model.kernels && model.kernels.length > 0 && (
            <KernelList
              kernels={model.kernels}
              now={snapshot.timestamp}
              actions={actions}
              trans={trans}
            />
          )}
          {model.history.gpus.length > 0 &&
            reportedCharts(props.charts, snapshot).map(kind => (
              <GpuChart
                key={kind}
                kind={kind}
                history={model.history}
                snapshot={snapshot}
                windowSeconds={props.windowSeconds}
                themeRevision={props.themeRevision}
                bands={bands}
                onBandClick={band => props.onRevealCell(band.key)}
                onOpen={() => actions.openDashboard(kind)}
                trans={trans}
              />
            ))}
        </div>
      </>
    );
  }
}
