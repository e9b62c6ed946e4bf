import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ConsolePanel, IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator } from '@jupyterlab/translation';

// The inspector checks each kernel start of a notebook with a fingerprint
// from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { EnvironmentInspector } from '../env/inspector';
import {
  IEnvironmentInspector,
  IGpuMonitorModel,
  IInspectionTarget
} from '../tokens';
import { followSettings } from './settings';

/**
 * Provides the inspector of the current notebook's (or console's) kernel
 * environment.
 */
export const inspectorPlugin: JupyterFrontEndPlugin<IEnvironmentInspector> = {
  id: 'jupyterlab-gpu-monitor:inspector',
  description:
    "Inspects the current notebook's or console's kernel: what the server sees of its process, a silent in-kernel probe, findings with fixes, and drift from the notebook's environment fingerprint.",
  autoStart: true,
  provides: IEnvironmentInspector,
  requires: [INotebookTracker],
  optional: [IConsoleTracker, IGpuMonitorModel, ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    consoles: IConsoleTracker | null,
    gpuModel: IGpuMonitorModel | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null
  ): IEnvironmentInspector => {
    const inspector = new EnvironmentInspector({
      serverSettings: app.serviceManager.serverSettings,
      gpuModel,
      translator
    });
    // The GPU panel marks the GPUs the followed kernel can see.
    inspector.kernelGpusChanged.connect((_, gpus) => {
      if (gpuModel) {
        gpuModel.kernelGpus = gpus;
      }
    });
    // The last notebook or console that was current; when it closes, the
    // one now current in either tracker.
    let followed: NotebookPanel | ConsolePanel | null = null;
    const follow = (widget: NotebookPanel | ConsolePanel | null) => {
      if (widget === followed) {
        return;
      }
      followed = widget;
      inspector.setTarget(widget ? Private.targetOf(widget) : null);
    };
    const onCurrentChanged = (
      _: unknown,
      widget: NotebookPanel | ConsolePanel | null
    ) => {
      if (widget) {
        follow(widget);
      } else if (followed?.isDisposed) {
        follow(notebooks.currentWidget ?? consoles?.currentWidget ?? null);
      }
    };
    notebooks.currentChanged.connect(onCurrentChanged);
    consoles?.currentChanged.connect(onCurrentChanged);
    follow(notebooks.currentWidget ?? consoles?.currentWidget ?? null);

    void followSettings(registry, inspectorPlugin.id, settings => {
      inspector.packages = settings.get('packages').composite as string[];
      inspector.probeTimeoutSeconds = settings.get('probeTimeout')
        .composite as number;
      inspector.deepCheckTimeoutSeconds = settings.get('deepCheckTimeout')
        .composite as number;
    });
    return inspector;
  }
};

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * What the inspector follows of a notebook or console panel.
   */
  export function targetOf(
    widget: NotebookPanel | ConsolePanel
  ): IInspectionTarget {
    return {
      get label() {
        return widget.title.label;
      },
      sessionContext: widget.sessionContext,
      notebook: widget instanceof NotebookPanel ? widget.context.model : null
    };
  }
}
