import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * Call the server extension's REST API and return the parsed JSON body.
 *
 * @param endPoint - the path under `<baseUrl>/gpu-monitor/api/`, with its
 *   query string if any
 * @param serverSettings - the connection settings of the Jupyter server
 * @param init - the fetch options of the request
 * @returns the parsed JSON body of the response
 * @throws {ServerConnection.ResponseError} when the server answers with an
 *   error status; its message is the server's `message`
 * @throws {ServerConnection.NetworkError} when the server cannot be reached
 */
export async function requestAPI<T>(
  endPoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<T> {
  const response = await Private.send(endPoint, serverSettings, init);
  return (await response.json()) as T;
}

/**
 * Call the server extension's REST API and return the body as text, for the
 * endpoints that answer with a file (environment.yml).
 *
 * @throws as {@link requestAPI} does
 */
export async function requestText(
  endPoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<string> {
  const response = await Private.send(endPoint, serverSettings, init);
  return response.text();
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Send a request under `<baseUrl>/gpu-monitor/api/`; the response when its
   * status is a success.
   */
  export async function send(
    endPoint: string,
    serverSettings: ServerConnection.ISettings,
    init: RequestInit
  ): Promise<Response> {
    const requestUrl = URLExt.join(
      serverSettings.baseUrl,
      'gpu-monitor',
      'api',
      endPoint
    );
    const response = await ServerConnection.makeRequest(
      requestUrl,
      init,
      serverSettings
    );
    if (!response.ok) {
      throw await ServerConnection.ResponseError.create(response);
    }
    return response;
  }
}
