import { INotebookModel } from '@jupyterlab/notebook';

import { IEnvironmentFingerprint, METADATA_KEY } from '../tokens';

// Reading and writing the fingerprint a notebook keeps, apart from making and
// comparing one (./fingerprint), which is loaded only when a notebook has one.

/**
 * A fingerprint read from notebook metadata; null when there is none or it is
 * not one.
 */
export function parseFingerprint(
  value: unknown
): IEnvironmentFingerprint | null {
  const fingerprint = value as Partial<IEnvironmentFingerprint> | null;
  if (
    typeof fingerprint !== 'object' ||
    fingerprint === null ||
    typeof fingerprint.recorded !== 'string' ||
    typeof fingerprint.environment?.prefix !== 'string' ||
    typeof fingerprint.python?.version !== 'string' ||
    typeof fingerprint.packages !== 'object' ||
    fingerprint.packages === null
  ) {
    return null;
  }
  return {
    torch_cuda: null,
    gpus: null,
    ...fingerprint
  } as IEnvironmentFingerprint;
}

/**
 * The fingerprint a notebook recorded; null when it has none.
 */
export function readFingerprint(
  notebook: INotebookModel
): IEnvironmentFingerprint | null {
  const records = notebook.getMetadata(METADATA_KEY) as
    { environment?: unknown } | undefined;
  return parseFingerprint(records?.environment);
}

/**
 * Record a fingerprint in a notebook's metadata, keeping its other records.
 */
export function writeFingerprint(
  notebook: INotebookModel,
  fingerprint: IEnvironmentFingerprint
): void {
  const records = notebook.getMetadata(METADATA_KEY);
  notebook.setMetadata(METADATA_KEY, {
    ...(typeof records === 'object' && records !== null ? records : {}),
    environment: fingerprint
  });
}
