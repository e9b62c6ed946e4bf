import { ServerConnection } from '@jupyterlab/services';

import { IGpuHistory } from '../restapi/gpus';
import { a5000History, a5000Snapshot } from './payloads';

/**
 * JupyterHub serves each user's server under `/user/<name>/`.
 */
export const HUB_BASE_URL = 'http://localhost/user/alice/';

/**
 * A response with a JSON body.
 */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' }
  });
}

/**
 * A fake Jupyter server under {@link HUB_BASE_URL}: it answers each request
 * with what `answer` returns for it (a Response as it is, anything else as a
 * JSON body) and remembers the requests it got.
 */
export function fakeServer(answer: (request: Request) => unknown): {
  settings: ServerConnection.ISettings;
  requests: Request[];
} {
  const requests: Request[] = [];
  const settings = ServerConnection.makeSettings({
    baseUrl: HUB_BASE_URL,
    fetch: async (input: RequestInfo | URL) => {
      const request = input as Request;
      requests.push(request);
      const body = await answer(request);
      return body instanceof Response ? body : jsonResponse(body);
    }
  });
  return { settings, requests };
}

/**
 * The URL a request went to, without the cache-busting parameter that
 * ServerConnection adds to `no-store` requests (a bare timestamp).
 */
export function requestedUrl(request: Request): URL {
  const url = new URL(request.url);
  for (const key of [...url.searchParams.keys()]) {
    if (/^\d+$/.test(key) && url.searchParams.get(key) === '') {
      url.searchParams.delete(key);
    }
  }
  return url;
}

/**
 * The endpoint a request went to, under the extension's API: `gpus`,
 * `gpus/history`.
 */
export function endpoint(request: Request): string {
  return requestedUrl(request).pathname.replace(/^.*\/gpu-monitor\/api\//, '');
}

/**
 * A server that answers `gpus` with the recorded A5000 snapshot and
 * `gpus/history` with the next of `histories` (empty once they run out).
 */
export function a5000Server(
  ...histories: IGpuHistory[]
): ReturnType<typeof fakeServer> {
  return fakeServer(request => {
    if (endpoint(request) === 'gpus') {
      return a5000Snapshot();
    }
    return histories.shift() ?? { ...a5000History(), timestamps: [], gpus: [] };
  });
}
