import { JSONExt, JSONObject } from '@lumino/coreutils';

import { INotebookGpuNeed, METADATA_KEY } from '../tokens';
import { NotebookGpuRuns } from './notebookRuns';
import { lastRunRecord, notebookNeed, readLastRun } from './record';

/**
 * What the records need of a cell: its id and metadata (an `ICellModel`).
 */
export interface IRecordedCell {
  /**
   * The cell's id.
   */
  readonly id: string;
  /**
   * `code`, `markdown` or `raw`.
   */
  readonly type: string;
  /**
   * A metadata value of the cell.
   */
  getMetadata(key: string): any;
  /**
   * Set a metadata value of the cell.
   */
  setMetadata(key: string, value: any): void;
}

/**
 * Write the record of each code cell's last measured run into its metadata
 * (`gpu_monitor.last_run`), where it changed; other keys of `gpu_monitor`
 * are kept, and a cell whose last run left nothing to record keeps its
 * record.
 *
 * @returns how many cells got a new record
 */
export function writeLastRuns(
  cells: Iterable<IRecordedCell>,
  runs: NotebookGpuRuns
): number {
  let written = 0;
  for (const cell of cells) {
    const run = cell.type === 'code' ? runs.lastRun(cell.id) : undefined;
    const record = run ? lastRunRecord(run) : null;
    if (record === null) {
      continue;
    }
    const metadata = cell.getMetadata(METADATA_KEY);
    const kept: JSONObject =
      metadata !== null &&
      typeof metadata === 'object' &&
      !Array.isArray(metadata)
        ? metadata
        : {};
    const unchanged =
      kept.last_run !== undefined &&
      JSONExt.deepEqual(kept.last_run, record as unknown as JSONObject);
    if (!unchanged) {
      cell.setMetadata(METADATA_KEY, { ...kept, last_run: record });
      written++;
    }
  }
  return written;
}

/**
 * What a notebook needs of a GPU, from the records of its code cells; null
 * when none has one.
 */
export function recordedNeed(
  cells: Iterable<IRecordedCell>
): INotebookGpuNeed | null {
  const records = [];
  for (const cell of cells) {
    const record =
      cell.type === 'code' ? readLastRun(cell.getMetadata(METADATA_KEY)) : null;
    if (record !== null) {
      records.push(record);
    }
  }
  return notebookNeed(records);
}
