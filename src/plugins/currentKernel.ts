import { INotebookTracker } from '@jupyterlab/notebook';

/**
 * Call `apply` with the id of the current notebook's kernel now and
 * whenever it changes: another notebook, a kernel started, restarted or
 * changed; null when there is none.
 */
export function followCurrentKernel(
  notebooks: INotebookTracker,
  apply: (kernelId: string | null) => void
): void {
  const follow = (): void => {
    const context = notebooks.currentWidget?.sessionContext;
    apply(context?.session?.kernel?.id ?? null);
  };
  notebooks.currentChanged.connect((_, panel) => {
    // Connecting the same slot twice is a no-op: once per notebook.
    panel?.sessionContext.kernelChanged.connect(follow);
    follow();
  });
  follow();
}
