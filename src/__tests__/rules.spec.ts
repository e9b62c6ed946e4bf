/**
 * @jest-environment node
 */
import { LOW_UTILIZATION_PERCENT } from '../restapi/rules';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

describe('the shared rules', () => {
  it("start the settings a user may move where the server's findings draw the line", () => {
    // The alerts' and the cell hints' low utilisation, as the inspector's
    // finding of a GPU held by an idle kernel.
    expect(SETTINGS_DEFAULTS.alerts.lowUtilizationPercent).toBe(
      LOW_UTILIZATION_PERCENT
    );
    expect(SETTINGS_DEFAULTS.cells.lowUtilizationPercent).toBe(
      LOW_UTILIZATION_PERCENT
    );
  });
});
