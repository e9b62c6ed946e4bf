/**
 * @jest-environment node
 */
import { toggleGpu } from '../charts/legend';

const ALL = [0, 1, 2];

describe('toggleGpu', () => {
  it('hides a shown GPU and shows a hidden one', () => {
    expect([...toggleGpu(new Set(), 1, false, ALL)]).toEqual([1]);
    expect([...toggleGpu(new Set([1, 2]), 1, false, ALL)]).toEqual([2]);
  });

  it('does not hide the last GPU shown', () => {
    const hidden = new Set([0, 1]);
    expect(toggleGpu(hidden, 2, false, ALL)).toBe(hidden);
  });

  it('shows a GPU alone with Shift, and every GPU again when it already is alone', () => {
    expect([...toggleGpu(new Set(), 1, true, ALL)]).toEqual([0, 2]);
    expect([...toggleGpu(new Set([1]), 1, true, ALL)]).toEqual([0, 2]);
    expect([...toggleGpu(new Set([0, 2]), 1, true, ALL)]).toEqual([]);
  });
});
