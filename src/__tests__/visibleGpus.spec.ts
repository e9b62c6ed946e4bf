/**
 * @jest-environment node
 */
import { visibleGpuIndices } from '../env/gpus';
import { h100MigSnapshot } from './envPayloads';
import { a5000Snapshot } from './payloads';

describe('visibleGpuIndices', () => {
  const a5000 = a5000Snapshot();
  const [first, second] = a5000.gpus.map(gpu => gpu.uuid!);

  it.each<[string | null, number[]]>([
    [null, [0, 1]],
    ['', []],
    ['1', [1]],
    ['1,0', [1, 0]],
    [' 0 , 1 ', [0, 1]],
    ['0,0', [0]],
    ['-1', []]
  ])('CUDA_VISIBLE_DEVICES=%p lets the kernel use %p', (value, indices) => {
    expect(visibleGpuIndices(value, a5000)).toEqual(indices);
  });

  it('stops at the first entry that names no GPU, as CUDA does', () => {
    expect(visibleGpuIndices('1,7', a5000)).toEqual([1]);
    expect(visibleGpuIndices('7,1', a5000)).toEqual([]);
  });

  it('takes GPU UUIDs and their unique prefixes', () => {
    expect(visibleGpuIndices(`${second},${first}`, a5000)).toEqual([1, 0]);
    expect(visibleGpuIndices(second.slice(0, -1), a5000)).toEqual([1]);
    // Both A5000s of the capture share this prefix: CUDA cannot tell which.
    expect(visibleGpuIndices('GPU-12345678', a5000)).toEqual([]);
  });

  it('counts a MIG device for its GPU', () => {
    const h100 = h100MigSnapshot();
    const mig = h100.gpus[0].mig_devices[2].uuid!;
    expect(visibleGpuIndices(mig, h100)).toEqual([0]);
    expect(visibleGpuIndices('MIG-00000004', h100)).toEqual([]);
  });
});
