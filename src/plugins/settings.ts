import { ISettingRegistry } from '@jupyterlab/settingregistry';

/**
 * Apply a plugin's settings now and whenever they change.
 *
 * @returns the settings; null without a registry or when they cannot be
 *   loaded (the plugin then keeps its defaults)
 */
export async function followSettings(
  registry: ISettingRegistry | null,
  pluginId: string,
  apply: (settings: ISettingRegistry.ISettings) => void
): Promise<ISettingRegistry.ISettings | null> {
  if (!registry) {
    return null;
  }
  try {
    const settings = await registry.load(pluginId);
    apply(settings);
    settings.changed.connect(apply);
    return settings;
  } catch (reason) {
    console.error(`Failed to load the settings of ${pluginId}.`, reason);
    return null;
  }
}
