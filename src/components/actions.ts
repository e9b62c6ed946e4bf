/**
 * What the panel's links and buttons do. The panel plugin runs them as
 * commands, so that every one of them also exists outside the panel.
 */
export interface IPanelActions {
  /**
   * Open a notebook or console by its server path.
   */
  openPath(path: string): void;
  /**
   * Interrupt one of this server's kernels, after a confirmation.
   *
   * @param label - what the kernel serves, for the confirmation
   */
  interruptKernel(kernelId: string, label: string): void;
  /**
   * Shut down one of this server's kernels, after a confirmation.
   *
   * @param label - what the kernel serves, for the confirmation
   */
  shutDownKernel(kernelId: string, label: string): void;
  /**
   * Release the GPU memory torch caches in one of this server's idle kernels,
   * and say how much the GPUs got back.
   *
   * @param label - what the kernel serves, for the notification
   */
  releaseCachedMemory(kernelId: string, label: string): void;
  /**
   * Point the current notebook's kernel at these GPUs, by their indices.
   */
  useGpus(gpuIndices: readonly number[]): void;
  /**
   * Whether there is a notebook to point at GPUs.
   */
  canUseGpus(): boolean;
  /**
   * Open the GPU dashboard in the main area, at one of its charts if given.
   */
  openDashboard(chart?: string): void;
}
