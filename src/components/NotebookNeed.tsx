import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { checkFit, fitText, gpusVisibleTo, needText } from '../cells/fit';
import { useGpusCaption, useGpusLabel } from '../freeGpu/freeGpu';
import { IKernelGpus, INotebookGpuRuns } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';
import { IPanelActions } from './actions';

/**
 * The properties of {@link NotebookNeed}.
 */
export namespace NotebookNeed {
  /**
   * The properties of {@link NotebookNeed}.
   */
  export interface IProps {
    /**
     * The current notebook, with the need its cells recorded.
     */
    notebook: INotebookGpuRuns;
    /**
     * The latest snapshot.
     */
    snapshot: IGpuSnapshot;
    /**
     * The GPUs the current notebook's kernel can see, as the environment
     * inspector says; null when unknown.
     */
    kernelGpus: IKernelGpus | null;
    /**
     * What the button does.
     */
    actions: IPanelActions;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * What the current notebook needed at its peak, as its cells recorded, and
 * whether that fits on the GPUs its kernel would use now, with a button
 * that points it at GPUs that have room when it does not.
 */
export function NotebookNeed(
  props: NotebookNeed.IProps
): React.ReactElement | null {
  const { notebook, snapshot, kernelGpus, actions, trans } = props;
  const need = notebook.need;
  if (need === null) {
    return null;
  }
  const fit = checkFit(
    need,
    snapshot,
    gpusVisibleTo(notebook.path, kernelGpus),
    notebook.kernelId
  );
  const name = PathExt.basename(notebook.path);
  const suggestion = fit?.suggestion ?? null;
  return (
    <section
      className={`jp-GpuMonitor-need${fit && !fit.fits ? ' jp-mod-warn' : ''}`}
      aria-label={trans.__('GPU need of %1', name)}
    >
      <p className="jp-GpuMonitor-needText">
        <strong>{name}</strong>{' '}
        {trans._p('end of a sentence', '%1.', needText(need, trans))}
      </p>
      {fit && <p className="jp-GpuMonitor-needText">{fitText(fit, trans)}</p>}
      {suggestion && (
        <button
          type="button"
          className="jp-GpuMonitor-button"
          title={useGpusCaption(trans)}
          onClick={() => actions.useGpus(suggestion)}
        >
          {useGpusLabel(suggestion, trans)}
        </button>
      )}
    </section>
  );
}
