/**
 * Error answers: What every route answers with a status of 400 or more.
 *
 * Generated from api_schema/errors.json by `jlpm build:schemas`; do not edit.
 */

/**
 * Why a conda command gave no answer (the keys of conda/errors.py HINTS).
 */
export type CondaErrorKind =
  'not_installed' | 'timeout' | 'failed' | 'bad_output';

/**
 * A conda command that failed.
 */
export interface ICondaError {
  kind: CondaErrorKind;
  /**
   * What happened, for a person.
   */
  message: string;
  /**
   * What to do about it, for a person.
   */
  hint: string;
}

/**
 * The body of an error answer, in the shape of jupyter_server's `APIHandler`.
 */
export interface IErrorBody {
  /**
   * What went wrong and what to do, for a person (never an echo of the request).
   */
  message: string;
  /**
   * The HTTP reason phrase; null when the handler gave none.
   */
  reason?: string | null;
  /**
   * With a failure of conda (502, 503, 504): what it was.
   */
  error?: ICondaError;
  /**
   * With a 409: the ids of the environments that share the name asked for.
   */
  ids?: string[];
}
