/**
 * @jest-environment node
 */

import { releaseCachedMemory } from '../api';
import { releaseFailureNotice, releaseNotice } from '../kernels/cacheRelease';
import { MAX_MESSAGE_LENGTH } from '../notification';
import { ICacheReleaseAnswer } from '../restapi/kernels';
import { fakeServer, jsonResponse, requestedUrl } from './server';
import { trans } from './trans';

const KERNEL_ID = '0a688bbf-09fe-4f6e-8b8d-517ceeea98eb';

/**
 * The notice the panel shows after the server answered `status` with `body`
 * (an answer, or an error body with the server's own message).
 */
async function noticeFor(status: number, body: unknown) {
  const { settings, requests } = fakeServer(() => jsonResponse(body, status));
  const notice = await releaseCachedMemory(settings, KERNEL_ID).then(
    answer => releaseNotice(answer, 'train.ipynb', trans),
    error => releaseFailureNotice(error, 'train.ipynb', trans)
  );
  return { notice, request: requests[0] };
}

/**
 * An answer in which nothing was released, for this reason.
 */
function nothingDone(
  outcome: ICacheReleaseAnswer['outcome']
): ICacheReleaseAnswer {
  return {
    outcome,
    reserved_before_bytes: null,
    reserved_after_bytes: null,
    released_bytes: null
  };
}

describe('releasing a kernel’s cached GPU memory', () => {
  it('asks the kernel’s release route and says how much the GPUs got back', async () => {
    const { notice, request } = await noticeFor(200, {
      outcome: 'released',
      reserved_before_bytes: 4026531840,
      reserved_after_bytes: 589299712,
      released_bytes: 3437232128
    });

    expect(request.method).toBe('POST');
    expect(requestedUrl(request).pathname).toBe(
      `/user/alice/gpu-monitor/api/kernels/${KERNEL_ID}/release-cached-memory`
    );
    expect(notice).toEqual({
      kind: 'success',
      message: 'Released 3.2 GiB of cached GPU memory from train.ipynb'
    });
  });

  it('says below a GiB in MiB, and when torch had nothing cached', async () => {
    const small = await noticeFor(200, {
      outcome: 'released',
      reserved_before_bytes: 1207959552,
      reserved_after_bytes: 943718400,
      released_bytes: 264241152
    });
    expect(small.notice.message).toBe(
      'Released 252 MiB of cached GPU memory from train.ipynb'
    );

    const none = await noticeFor(200, {
      outcome: 'released',
      reserved_before_bytes: 943718400,
      reserved_after_bytes: 943718400,
      released_bytes: 0
    });
    expect(none.notice).toEqual({
      kind: 'info',
      message:
        'train.ipynb had no cached GPU memory to release: its tensors use what it holds'
    });
  });

  it('says why there was nothing to release', async () => {
    expect(
      (await noticeFor(200, nothingDone('torch_not_imported'))).notice
    ).toEqual({
      kind: 'info',
      message: 'train.ipynb has not imported torch: nothing to release'
    });
    expect(
      (await noticeFor(200, nothingDone('cuda_not_initialized'))).notice
    ).toEqual({
      kind: 'info',
      message: 'train.ipynb has not used CUDA through torch: nothing to release'
    });
  });

  // The messages the server sends (test_cache_release.py), and the notice of
  // each: a kernel running a cell, or not answering, is to be tried again.
  it.each([
    [
      409,
      'the kernel is running a cell: try again when it is idle',
      'warning',
      'train.ipynb is running a cell: try again when it is idle'
    ],
    [
      504,
      'the kernel did not answer within 10 s; it may still release the memory once it is idle',
      'warning',
      'train.ipynb did not answer in time; it may release the memory once idle'
    ],
    [
      404,
      'no such kernel on this server',
      'error',
      'The kernel of train.ipynb is no longer running'
    ]
  ])(
    'tells what to do when the server answers %d',
    async (status, message, kind, expected) => {
      const { notice } = await noticeFor(status, { message, reason: null });
      expect(notice).toEqual({ kind, message: expected });
    }
  );

  it('gives the server’s reason for any other failure, cut to a notification', async () => {
    const failed = await noticeFor(502, {
      message:
        "the kernel could not release its cached GPU memory: AttributeError: module 'torch' has no attribute 'cuda'",
      reason: null
    });
    expect(failed.notice.kind).toBe('error');
    expect(failed.notice.message).toMatch(
      /^The cached GPU memory of train\.ipynb was not released: the kernel could not release/
    );
    expect(failed.notice.message.length).toBe(MAX_MESSAGE_LENGTH);
    expect(failed.notice.message.endsWith('…')).toBe(true);
  });
});
