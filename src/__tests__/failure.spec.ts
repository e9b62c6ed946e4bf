/**
 * @jest-environment node
 */
import { ServerConnection } from '@jupyterlab/services';

import { classifyFailure, describeFailure } from '../gpu/failure';
import { RequestFailureKind } from '../tokens';
import { trans } from './trans';

/**
 * The error ServerConnection throws for a response with this status.
 */
function responseError(status: number): ServerConnection.ResponseError {
  return new ServerConnection.ResponseError(
    new Response('{}', { status }),
    `the server says ${status}`
  );
}

describe('classifyFailure', () => {
  it('tells a missing server extension from another server error', () => {
    expect(classifyFailure(responseError(404))).toEqual({
      kind: 'not_enabled',
      message: 'the server says 404',
      status: 404
    });
    expect(classifyFailure(responseError(500)).kind).toBe('server');
  });

  it('tells an unreachable server from one that took too long', () => {
    const unreachable = new ServerConnection.NetworkError(
      new TypeError('Failed to fetch')
    );
    expect(classifyFailure(unreachable).kind).toBe('network');
    expect(classifyFailure(unreachable, true).kind).toBe('timeout');
  });
});

describe('describeFailure', () => {
  it.each<RequestFailureKind>(['not_enabled', 'server', 'network', 'timeout'])(
    'says what happened and what to do for %s',
    kind => {
      const { message, hint } = describeFailure(
        { kind, message: 'Internal Server Error', status: 500 },
        trans
      );
      expect(message).not.toBe('');
      expect(hint).not.toBe('');
    }
  );

  it('tells how to enable the server extension', () => {
    const { hint } = describeFailure(
      { kind: 'not_enabled', message: 'Not Found', status: 404 },
      trans
    );
    expect(hint).toContain(
      'jupyter server extension enable jupyterlab_gpu_monitor'
    );
  });
});
