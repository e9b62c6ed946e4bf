import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

// The model polls for the status bar item and the alerts from the start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { GpuModel } from '../gpu/model';
import { IGpuMonitorModel } from '../tokens';
import { followSettings } from './settings';

/**
 * Provides the model that polls the server extension for GPU readings.
 */
export const modelPlugin: JupyterFrontEndPlugin<IGpuMonitorModel> = {
  id: 'jupyterlab-gpu-monitor:model',
  description:
    'Provides the GPU readings polled from the server extension (latest snapshot and recent history), shared by the panel, the status bar item and the alerts.',
  autoStart: true,
  provides: IGpuMonitorModel,
  optional: [ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    registry: ISettingRegistry | null
  ): IGpuMonitorModel => {
    const model = new GpuModel({
      serverSettings: app.serviceManager.serverSettings
    });
    void followSettings(registry, modelPlugin.id, settings => {
      model.refreshIntervalSeconds = settings.get('refreshInterval')
        .composite as number;
      model.seldomIntervalSeconds = settings.get('seldomInterval')
        .composite as number;
    });
    return model;
  }
};
