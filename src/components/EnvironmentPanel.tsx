import { Clipboard, showErrorMessage } from '@jupyterlab/apputils';
import { ITranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { IDisposable } from '@lumino/disposable';
import * as React from 'react';

import { downloadFile } from '../download';
import { EXPORT_FILES } from '../env/catalog';
import { environmentIcon } from '../icons';
import { CommandIDs, IEnvironmentInspector, IGpuMonitorModel } from '../tokens';
import { EnvironmentFileStyle, IEnvironment } from '../restapi/envs';
import { WatchingPanel } from './WatchingPanel';

/**
 * The panel's content: loaded the first time the panel is shown, not while
 * JupyterLab starts.
 */
const EnvironmentView = React.lazy(async () => ({
  default: (await import('./EnvironmentView')).EnvironmentView
}));

/**
 * The commands whose buttons the panel shows.
 */
const PANEL_COMMANDS = new Set<string>([
  CommandIDs.refreshEnvironment,
  CommandIDs.deepCheck,
  CommandIDs.recordEnvironment,
  CommandIDs.exportEnvironmentFile,
  CommandIDs.insertReproducibilityCell
]);

/**
 * The Environment side panel: the current kernel's environment, the
 * findings with their fixes, the notebook's fingerprint and the server's
 * environments. Shown, it has the inspector inspect the kernel.
 */
export class EnvironmentPanel extends WatchingPanel {
  /**
   * Create the panel.
   */
  constructor(options: EnvironmentPanel.IOptions) {
    super({
      id: 'jp-GpuMonitor-environment',
      className: 'jp-GpuMonitor-panel',
      icon: environmentIcon,
      label: trans => trans.__('Environment'),
      area: 'side',
      translator: options.translator
    });
    this._inspector = options.inspector;
    this._gpuModel = options.gpuModel ?? null;
    this._commands = options.commands;
    this._inspector.changed.connect(this.onSourceChanged, this);
    this._inspector.environments.changed.connect(this.onSourceChanged, this);
    this._gpuModel?.changed.connect(this.onSourceChanged, this);
    this._commands.commandChanged.connect(this._onCommandChanged, this);
  }

  /**
   * Download an environment's environment.yml, requirements.txt or
   * pylock.toml.
   */
  async exportEnvironment(
    environment: IEnvironment,
    style: EnvironmentFileStyle
  ): Promise<void> {
    try {
      const text = await this._inspector.environments.exportFile(
        environment.id,
        style
      );
      const file = EXPORT_FILES[style];
      downloadFile(text, file.name, file.mediaType);
    } catch (error) {
      // The server's 404 speaks to API clients ("GET envs lists..."): the
      // panel's words for a deleted environment (the list is read again).
      await showErrorMessage(
        this.trans.__('Cannot export %1', environment.name),
        this._inspector.environments.isGone(environment.id)
          ? this.trans.__(
              '%1 was deleted since the list was read: it is read again.',
              environment.name
            )
          : (error as Error)
      );
    }
  }

  /**
   * The panel's content.
   */
  render(): React.ReactElement | null {
    return this.renderLoaded(
      this.trans.__('Loading the Environment panel…'),
      () => (
        <EnvironmentView
          inspector={this._inspector}
          snapshot={this._gpuModel?.snapshot ?? null}
          commands={this._commands}
          onCopy={fix => Clipboard.copyToSystem(fix)}
          onExpand={environment => {
            const catalog = this._inspector.environments;
            catalog.loadPackages(environment.id).catch(error =>
              // A deleted environment says so in its row, and goes.
              catalog.isGone(environment.id)
                ? undefined
                : showErrorMessage(
                    this.trans.__(
                      'Cannot read the packages of %1',
                      environment.name
                    ),
                    error as Error
                  )
            );
          }}
          onExport={(environment, style) => {
            void this.exportEnvironment(environment, style);
          }}
          trans={this.trans}
        />
      )
    );
  }

  /**
   * Have the inspector inspect the kernel; read the server's environments,
   * and the GPUs once: the panel names the GPUs the kernel sees, which do
   * not change from one reading to the next.
   */
  protected watch(): IDisposable[] {
    void this._inspector.environments.load();
    void this._gpuModel?.read().catch(() => {
      // No GPU reading: the panel shows what the server could not read.
    });
    return [this._inspector.watch()];
  }

  /**
   * Render again when one of the panel's own buttons changes, not on every
   * command of the application.
   */
  private _onCommandChanged(
    sender: CommandRegistry,
    change: CommandRegistry.ICommandChangedArgs
  ): void {
    if (change.type === 'many-changed' || PANEL_COMMANDS.has(change.id!)) {
      this.onSourceChanged();
    }
  }

  private _inspector: IEnvironmentInspector;
  private _gpuModel: IGpuMonitorModel | null;
  private _commands: CommandRegistry;
}

/**
 * The types of {@link EnvironmentPanel}.
 */
export namespace EnvironmentPanel {
  /**
   * What the panel shows and in which language.
   */
  export interface IOptions {
    /**
     * The inspector of the current kernel.
     */
    inspector: IEnvironmentInspector;
    /**
     * The GPU model, for the names of the GPUs the kernel can see.
     */
    gpuModel?: IGpuMonitorModel | null;
    /**
     * The application's commands, for the panel's actions.
     */
    commands: CommandRegistry;
    /**
     * The application's translator.
     */
    translator?: ITranslator | null;
  }
}
