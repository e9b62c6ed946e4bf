import { Notification } from '@jupyterlab/apputils';
import { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';

import { WARNING_AUTO_CLOSE_MS } from '../notification';
import { IGpuMonitorModel } from '../tokens';
import {
  cudaVisibleDevicesSource,
  gpuLoads,
  IRoomNeeded,
  isCudaVisibleDevicesCell,
  leastUsed,
  noRoomText
} from './freeGpu';
import { kernelHoldings } from '../gpu/processes';

/**
 * Point a notebook's kernel at `gpus`, or at the least used GPU with the
 * room needed: a first cell that sets `CUDA_VISIBLE_DEVICES` (the one an
 * earlier use wrote, replaced), selected, with a warning that the kernel must
 * restart when it already holds GPU memory; or a warning why no GPU fits.
 */
export async function useGpuIn(
  panel: NotebookPanel,
  gpus: number[] | undefined,
  model: IGpuMonitorModel,
  room: IRoomNeeded,
  trans: TranslationBundle
): Promise<void> {
  const kernelId = panel.sessionContext.session?.kernel?.id ?? null;
  if (gpus === undefined) {
    const choice = await chooseGpus(model, kernelId, room, trans);
    if (typeof choice === 'string') {
      Notification.warning(choice, { autoClose: WARNING_AUTO_CLOSE_MS });
      return;
    }
    gpus = choice;
  }
  await panel.context.ready;
  const notebook = panel.content;
  putFirstCell(
    notebook.model!.sharedModel,
    cudaVisibleDevicesSource(gpus, trans),
    source => isCudaVisibleDevicesCell(source, trans)
  );
  notebook.activeCellIndex = 0;
  void notebook.scrollToCell(notebook.widgets[0]);
  if (
    kernelId &&
    model.snapshot &&
    kernelHoldings(model.snapshot.gpus, kernelId).size > 0
  ) {
    const { warnRestartNeeded } = await import('./restartNotice');
    warnRestartNeeded(panel.sessionContext, trans);
  }
}

/**
 * The least used GPU with the room needed (what the notebook's kernel holds
 * counting as room), as a list of one index; else why there is none.
 */
export async function chooseGpus(
  model: IGpuMonitorModel,
  kernelId: string | null,
  room: IRoomNeeded,
  trans: TranslationBundle
): Promise<number[] | string> {
  if (model.snapshot === null) {
    await model.read();
  }
  const snapshot = model.snapshot;
  const loads = snapshot ? gpuLoads(snapshot, model.history, kernelId) : [];
  if (loads.length === 0) {
    return trans.__('No GPU to choose from: the server reads none.');
  }
  const least = leastUsed(loads, room);
  return least ? [least.index] : noRoomText(loads, room, trans);
}

/**
 * Put the source in a new first cell, or in the first cell when an earlier
 * use wrote it (`ours`), instead of stacking a second one.
 */
export function putFirstCell(
  notebook: INotebookModel['sharedModel'],
  source: string,
  ours: (source: string) => boolean
): void {
  const first = notebook.cells[0];
  if (first?.cell_type === 'code' && ours(first.getSource())) {
    first.setSource(source);
  } else {
    notebook.insertCell(0, { cell_type: 'code', source });
  }
}
