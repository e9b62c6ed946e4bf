import { ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel } from '@jupyterlab/notebook';

import { METADATA_KEY } from '../tokens';
import { Framework } from './frameworks';

/**
 * What a reproducibility cell records in its metadata.
 */
export interface ISeedCellRecord {
  /**
   * The seed.
   */
  seed: number;
  /**
   * Whether strict mode was on.
   */
  strict: boolean;
  /**
   * The frameworks it seeds.
   */
  frameworks: Framework[];
}

/**
 * The indices of the notebook's reproducibility cells, by their metadata.
 */
export function findSeedCells(notebook: INotebookModel): number[] {
  const found: number[] = [];
  for (let index = 0; index < notebook.cells.length; index++) {
    const cell = notebook.cells.get(index);
    const records = cell.getMetadata(METADATA_KEY) as
      { reproducibility?: unknown } | undefined;
    if (cell.type === 'code' && records?.reproducibility) {
      found.push(index);
    }
  }
  return found;
}

/**
 * Put the reproducibility cell in a notebook: replace the one it has (its
 * source, metadata, and outputs, which no longer match) where it is, or
 * insert one at the top. A copy pasted elsewhere is removed: there is one.
 *
 * @returns the cell's index, and whether it replaced one
 */
export function upsertSeedCell(
  notebook: INotebookModel,
  source: string,
  record: ISeedCellRecord
): { index: number; replaced: boolean } {
  const [existing, ...copies] = findSeedCells(notebook);
  const metadata = { reproducibility: { ...record } };
  notebook.sharedModel.transact(() => {
    for (const index of copies.reverse()) {
      notebook.sharedModel.deleteCell(index);
    }
    if (existing === undefined) {
      notebook.sharedModel.insertCell(0, {
        cell_type: 'code',
        source,
        metadata: { [METADATA_KEY]: metadata }
      });
    } else {
      const cell = notebook.cells.get(existing) as ICodeCellModel;
      cell.sharedModel.setSource(source);
      cell.setMetadata(METADATA_KEY, {
        ...(cell.getMetadata(METADATA_KEY) as object),
        ...metadata
      });
      cell.clearExecution();
    }
  });
  return existing === undefined
    ? { index: 0, replaced: false }
    : { index: existing, replaced: true };
}
