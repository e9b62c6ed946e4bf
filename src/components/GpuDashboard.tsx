import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { runBands } from '../cells/format';
import {
  CHART_KINDS,
  ITimeSpan,
  LINK_CHART_KINDS,
  PanelChartKind
} from '../charts/chartKinds';
import {
  currentColumns,
  recordedCharts,
  reportedCharts
} from '../charts/charts';
import { describeFailure, lastReadingsUnder, retryText } from '../gpu/failure';
import { frozenHistory } from '../gpu/history';
import { toggleGpu } from '../charts/legend';
import { formatClockTime } from '../format/units';
import {
  hasMachineReadings,
  MACHINE_CHART_KINDS
} from '../charts/machineCharts';
import { IGpuMonitorModel, IGpuTimeSeries, INotebookGpuRuns } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { GpuChart } from './GpuChart';
import { MachineChart } from './MachineChart';
import { MonitorMessage, snapshotMessage } from './MonitorMessage';
import { WindowSelect } from './WindowSelect';

/**
 * The properties of {@link GpuDashboard}.
 */
export namespace GpuDashboard {
  /**
   * The properties of {@link GpuDashboard}.
   */
  export interface IProps {
    /**
     * The model whose state is shown.
     */
    model: IGpuMonitorModel;
    /**
     * How far back the charts show at first, in seconds (the panel's
     * setting).
     */
    windowSeconds: number;
    /**
     * Changes when the theme changes.
     */
    themeRevision: number;
    /**
     * The current notebook's cell runs; null when no notebook is current.
     */
    notebook: INotebookGpuRuns | null;
    /**
     * Called with a cell's id when its band on a chart is clicked.
     */
    onRevealCell: (cellId: string) => void;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The key whose charts move their cursors together: one crosshair across
 * the dashboard's charts.
 */
const CURSOR_SYNC_KEY = 'jp-GpuMonitor-dashboard';

/**
 * The GPU dashboard: each measurement the GPUs report as a full-size chart,
 * one line per GPU. A legend that hides a GPU or shows it alone (in every
 * chart at once), one crosshair across the charts, pause, the window, and a
 * drag across any chart to zoom every chart into that past span (the
 * readings held as they were) until *Back to live*; the current notebook's
 * cell runs shaded.
 */
export function GpuDashboard(props: GpuDashboard.IProps): React.ReactElement {
  const { model, notebook, trans } = props;
  const { snapshot, failure } = model;
  const [windowSeconds, setWindowSeconds] = React.useState(props.windowSeconds);
  const [paused, setPaused] = React.useState<IGpuTimeSeries | null>(null);
  const [hidden, setHidden] = React.useState<ReadonlySet<number>>(new Set());
  const [zoom, setZoom] = React.useState<ITimeSpan | null>(null);
  const history = paused ?? model.history;
  // A span of the past stays put: the readings are held while it is shown.
  const zoomInto = (span: ITimeSpan): void => {
    setPaused(paused ?? frozenHistory(model.history));
    setZoom(span);
  };
  const backToLive = (): void => {
    setZoom(null);
    setPaused(null);
  };
  const failed = failure && describeFailure(failure, trans);
  const retry = retryText(model, trans) ?? undefined;
  const message = snapshot && snapshotMessage(snapshot, trans, retry);
  // The GPUs worked and now fail: the last readings stay, greyed, under the
  // error, as in the panel.
  const last =
    snapshot && message
      ? lastReadingsUnder(snapshot, model.lastReadings)
      : null;
  const shown = last ?? (message ? null : snapshot);
  return (
    <div className="jp-GpuMonitor-dashboardBody">
      <div className="jp-GpuMonitor-header">
        <h2 className="jp-GpuMonitor-title">{trans.__('GPU Dashboard')}</h2>
        {hidden.size > 0 && (
          <button
            type="button"
            className="jp-GpuMonitor-button"
            onClick={() => setHidden(new Set())}
          >
            {trans.__('Show all GPUs')}
          </button>
        )}
        {!zoom && history.timestamps.length > 1 && (
          <span className="jp-GpuMonitor-zoomSpan">
            {trans.__('Drag across a chart to zoom into that time')}
          </span>
        )}
        {zoom && (
          <>
            <span className="jp-GpuMonitor-zoomSpan" role="status">
              {trans.__(
                'Showing %1 to %2',
                formatClockTime(zoom.min, true),
                formatClockTime(zoom.max, true)
              )}
            </span>
            <button
              type="button"
              className="jp-GpuMonitor-button"
              title={trans.__('Follow the readings again, over the window')}
              onClick={backToLive}
            >
              {trans.__('Back to live')}
            </button>
          </>
        )}
        <button
          type="button"
          className="jp-GpuMonitor-button"
          hidden={zoom !== null}
          aria-pressed={paused !== null}
          title={
            paused
              ? trans.__('Follow the readings again')
              : model.history.timestamps.length === 0
                ? trans.__('No readings to hold yet')
                : trans.__(
                    'Hold the charts as they are; readings go on being kept'
                  )
          }
          disabled={model.history.timestamps.length === 0}
          onClick={() =>
            setPaused(paused ? null : frozenHistory(model.history))
          }
        >
          {paused ? trans.__('Resume') : trans.__('Pause')}
        </button>
        <WindowSelect
          seconds={windowSeconds}
          onChange={seconds => {
            setWindowSeconds(seconds);
            setZoom(null);
          }}
          trans={trans}
        />
      </div>
      {failed && (
        <MonitorMessage problem={failed} retry={retry} trans={trans} />
      )}
      {snapshot === null && !failure && (
        <p className="jp-GpuMonitor-loading" role="status">
          {trans.__('Reading the GPUs…')}
        </p>
      )}
      {message}
      {shown && (
        <Private.Charts
          snapshot={shown}
          history={history}
          stale={!!failure || last !== null}
          windowSeconds={windowSeconds}
          zoom={zoom}
          onZoom={zoomInto}
          themeRevision={props.themeRevision}
          notebook={notebook}
          hidden={hidden}
          onToggleGpu={(index, solo) =>
            setHidden(
              toggleGpu(
                hidden,
                index,
                solo,
                currentColumns(history, shown).map(gpu => gpu.index)
              )
            )
          }
          onRevealCell={props.onRevealCell}
          trans={trans}
        />
      )}
      {hasMachineReadings(history) && (
        <section
          className="jp-GpuMonitor-dashboardMachine"
          aria-label={trans.__('The machine')}
        >
          <h3 className="jp-GpuMonitor-sectionTitle">
            {snapshot?.machine?.memory_scope === 'container'
              ? trans.__('Container')
              : trans.__('Host')}
          </h3>
          <div className="jp-GpuMonitor-dashboardCharts">
            {MACHINE_CHART_KINDS.map(kind => (
              <MachineChart
                key={kind}
                kind={kind}
                history={history}
                memoryTotalMiB={snapshot?.machine?.memory_total_mib ?? null}
                windowSeconds={windowSeconds}
                span={zoom}
                onZoom={zoomInto}
                themeRevision={props.themeRevision}
                syncKey={CURSOR_SYNC_KEY}
                trans={trans}
              />
            ))}
          </div>
        </section>
      )}
    </div>
  );
}

/**
 * File-local parts of the dashboard.
 */
namespace Private {
  /**
   * The charts of what the GPUs report, and what they do not.
   */
  export function Charts(props: {
    snapshot: IGpuSnapshot;
    history: IGpuTimeSeries;
    stale: boolean;
    windowSeconds: number;
    zoom: ITimeSpan | null;
    onZoom: (span: ITimeSpan) => void;
    themeRevision: number;
    notebook: INotebookGpuRuns | null;
    hidden: ReadonlySet<number>;
    onToggleGpu: (index: number, solo: boolean) => void;
    onRevealCell: (cellId: string) => void;
    trans: TranslationBundle;
  }): React.ReactElement {
    const { snapshot, history, notebook, trans } = props;
    const revision = notebook?.revision;
    const bands = React.useMemo(
      () => (notebook ? runBands(notebook.runs) : []),
      [notebook, revision]
    );
    const charts = [
      ...reportedCharts(CHART_KINDS, snapshot),
      ...recordedCharts(LINK_CHART_KINDS, history, snapshot)
    ];
    // A board without a link's counters is common and not worth a word.
    const unreported = CHART_KINDS.filter(kind => !charts.includes(kind));
    return (
      <>
        {unreported.length > 0 && (
          <p className="jp-GpuMonitor-driver">
            {trans.__(
              'Not reported by these GPUs: %1.',
              unreported.map(kind => chartName(kind, trans)).join(', ')
            )}
          </p>
        )}
        <div
          className={`jp-GpuMonitor-dashboardCharts${props.stale ? ' jp-mod-stale' : ''}`}
        >
          {history.gpus.length > 0 &&
            charts.map(kind => (
              <GpuChart
                key={kind}
                kind={kind}
                history={history}
                snapshot={snapshot}
                windowSeconds={props.windowSeconds}
                span={props.zoom}
                onZoom={props.onZoom}
                themeRevision={props.themeRevision}
                bands={bands}
                onBandClick={band => props.onRevealCell(band.key)}
                hiddenGpus={props.hidden}
                onToggleGpu={props.onToggleGpu}
                syncKey={CURSOR_SYNC_KEY}
                trans={trans}
              />
            ))}
        </div>
      </>
    );
  }

  /**
   * A measurement's name, in a sentence.
   */
  function chartName(kind: PanelChartKind, trans: TranslationBundle): string {
    const names: { [K in PanelChartKind]: string } = {
      utilization: trans.__('utilization'),
      memory: trans.__('memory'),
      temperature: trans.__('temperature'),
      power: trans.__('power')
    };
    return names[kind];
  }
}
