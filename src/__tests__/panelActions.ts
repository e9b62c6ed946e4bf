import { IPanelActions } from '../components/actions';

/**
 * Panel actions that only record their calls.
 *
 * @param canUseGpus - whether a notebook is there to point at GPUs
 */
export function fakeActions(canUseGpus = true): {
  [K in keyof IPanelActions]: jest.Mock;
} {
  return {
    openPath: jest.fn(),
    interruptKernel: jest.fn(),
    shutDownKernel: jest.fn(),
    releaseCachedMemory: jest.fn(),
    useGpus: jest.fn(),
    canUseGpus: jest.fn(() => canUseGpus),
    openDashboard: jest.fn(),
    openLab: jest.fn()
  };
}
