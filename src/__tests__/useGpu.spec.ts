import { NotebookModel } from '@jupyterlab/notebook';

import {
  cudaVisibleDevicesSource,
  isCudaVisibleDevicesCell
} from '../freeGpu/freeGpu';
import { GpuModel } from '../gpu/model';
import { chooseGpus, putFirstCell } from '../freeGpu/useGpu';
import { roomFor } from '../freeGpu/useGpuCommand';
import { a5000Server } from './server';
import { trans } from './trans';

describe('chooseGpus', () => {
  let model: GpuModel;

  beforeEach(() => {
    model = new GpuModel({ serverSettings: a5000Server().settings });
  });

  afterEach(() => {
    model.dispose();
  });

  it('reads the GPUs when nobody has, and proposes the one with room: GPU 1, not the 91 % full GPU 0', async () => {
    expect(await chooseGpus(model, null, roomFor(null, 20), trans)).toEqual([
      1
    ]);
  });

  it('says why none fits a notebook whose cells needed more than any GPU has free', async () => {
    const need = {
      peakMemoryMiB: 20480,
      gpuCount: 1,
      perGpuMiB: [20480],
      gpuName: 'NVIDIA RTX A5000',
      date: null
    };
    expect(await chooseGpus(model, null, roomFor(need, 20), trans)).toBe(
      'No GPU has the 20.0 GiB this notebook needed free; the most free: GPU 1, 6.7 GiB.'
    );
  });
});

describe('putFirstCell', () => {
  it('inserts the cell first, and replaces it on a second use instead of stacking another', () => {
    const notebook = new NotebookModel();
    const shared = notebook.sharedModel;
    shared.insertCell(0, { cell_type: 'code', source: 'import torch' });
    const ours = (source: string) => isCudaVisibleDevicesCell(source, trans);

    putFirstCell(shared, cudaVisibleDevicesSource([1], trans), ours);
    putFirstCell(shared, cudaVisibleDevicesSource([0, 1], trans), ours);

    expect(shared.cells.map(cell => cell.getSource())).toEqual([
      cudaVisibleDevicesSource([0, 1], trans),
      'import torch'
    ]);
    notebook.dispose();
  });
});
