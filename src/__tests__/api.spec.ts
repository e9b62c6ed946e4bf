import { ServerConnection } from '@jupyterlab/services';

import {
  fetchHistory,
  fetchKernels,
  fetchSnapshot,
  fetchSpans,
  fetchStatus
} from '../api';
import { IErrorBody } from '../restapi/errors';
import { IGpuHistory, IGpuSnapshot, IServerStatus } from '../restapi/gpus';
import { a5000KernelSpans, a5000Kernels } from './payloads';
import { fakeServer, HUB_BASE_URL, jsonResponse, requestedUrl } from './server';

/**
 * A snapshot of one A10G, its values taken from the nvidia-smi capture
 * `nvidia-smi/xml/a10g-driver-515.105-v11-1proc.xml` of testdata/.
 */
const A10G_SNAPSHOT: IGpuSnapshot = {
  source: 'nvidia-smi',
  timestamp: 1700000000.5,
  driver_version: '515.105.01',
  cuda_version: '11.7',
  error: null,
  gpus: [
    {
      index: 0,
      uuid: 'GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94',
      name: 'NVIDIA A10G',
      pci_bus_id: '00000000:00:1E.0',
      utilization_gpu: 0,
      utilization_memory: 0,
      memory_total_mib: 23028,
      memory_used_mib: 22,
      memory_free_mib: 22569,
      temperature_c: 17,
      temperature_slowdown_c: 95,
      power_draw_w: 25.58,
      power_limit_w: 300,
      energy_consumed_j: null,
      fan_speed_pct: 0,
      sm_clock_mhz: 210,
      memory_clock_mhz: 405,
      performance_state: 'P8',
      encoder_utilization: 0,
      decoder_utilization: 0,
      clock_throttle_reasons: ['gpu_idle'],
      pcie_sent_bytes_per_second: 499712,
      pcie_received_bytes_per_second: 449536,
      nvlink_sent_bytes_per_second: null,
      nvlink_received_bytes_per_second: null,
      ecc_errors_corrected: 0,
      ecc_errors_uncorrected: 0,
      retired_pages: null,
      remapped_rows: 0,
      memory_repair_pending: false,
      mig_mode: null,
      mig_devices: [],
      processes: [
        {
          pid: 725,
          used_memory_mib: 22,
          name: '/usr/lib/xorg/Xorg',
          type: 'G',
          gpu_instance_id: null,
          utilization_gpu: null,
          visible: false,
          user: null,
          started: null,
          own: null,
          kernel_id: null,
          session_path: null,
          command: null,
          cpu_percent: null,
          host_memory_mib: null
        }
      ],
      processes_omitted: 0,
      unavailable: { mig_mode: 'MIG is not supported on this GPU' },
      error: null
    }
  ],
  machine: null
};

/**
 * Two samples of the A10G after `since`.
 */
const A10G_HISTORY: IGpuHistory = {
  interval_seconds: 1,
  history_seconds: 3600,
  timestamps: [13, 14],
  spacing_seconds: [1, 1],
  gpus: [
    {
      index: 0,
      uuid: 'GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94',
      name: 'NVIDIA A10G',
      utilization_gpu: [0, null],
      utilization_memory: [0, null],
      memory_used_mib: [22, 22],
      memory_total_mib: [23028, 23028],
      temperature_c: [17, 17],
      power_draw_w: [25.58, 25.58],
      fan_speed_pct: [0, 0],
      sm_clock_mhz: [210, 210],
      pcie_received_bytes_per_second: [0, 0],
      nvlink_received_bytes_per_second: [null, null]
    }
  ],
  machine: null
};

/**
 * A server without nvidia-smi; the message is the one of the capture
 * `nvidia-smi/errors/libnvidia-ml-so-not-found.txt`.
 */
const NO_DRIVER_STATUS: IServerStatus = {
  version: '0.1.0',
  source: null,
  source_setting: 'auto',
  interval_seconds: 1,
  history_seconds: 3600,
  idle_seconds: 60,
  sampling: false,
  reads: 1,
  driver_version: null,
  cuda_version: null,
  error: {
    kind: 'not_installed',
    message:
      "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
    hint: 'Install the NVIDIA driver, or set GpuMonitor.source.'
  }
};

/**
 * A fake server that answers every request with `status` and the JSON of
 * `body`.
 */
function serverAnswering(
  status: number,
  body: unknown
): ReturnType<typeof fakeServer> {
  return fakeServer(() => jsonResponse(body, status));
}

describe('fetchHistory', () => {
  it('asks for the points after `since` under a JupyterHub user base URL', async () => {
    const { settings, requests } = serverAnswering(200, A10G_HISTORY);

    await fetchHistory(settings, 12.5);

    expect(requests).toHaveLength(1);
    expect(requests[0].method).toBe('GET');
    expect(requestedUrl(requests[0]).href).toBe(
      'http://localhost/user/alice/gpu-monitor/api/gpus/history?since=12.5'
    );
  });

  it('asks for the whole history when `since` is undefined', async () => {
    const { settings, requests } = serverAnswering(200, A10G_HISTORY);

    await fetchHistory(settings);

    expect(requestedUrl(requests[0]).href).toBe(
      'http://localhost/user/alice/gpu-monitor/api/gpus/history'
    );
  });

  it('returns the series the server sent, nulls included', async () => {
    const { settings } = serverAnswering(200, A10G_HISTORY);

    const history = await fetchHistory(settings, 12.5);

    expect(history).toEqual(A10G_HISTORY);
    expect(history.gpus[0].utilization_gpu).toEqual([0, null]);
  });
});

describe('fetchSnapshot', () => {
  it('reads the GPUs from `gpus` under the base URL and returns them parsed', async () => {
    const { settings, requests } = serverAnswering(200, A10G_SNAPSHOT);

    const snapshot = await fetchSnapshot(settings);

    expect(requestedUrl(requests[0]).href).toBe(
      'http://localhost/user/alice/gpu-monitor/api/gpus'
    );
    expect(snapshot).toEqual(A10G_SNAPSHOT);
    expect(snapshot.gpus[0].processes[0].pid).toBe(725);
  });
});

describe('fetchStatus', () => {
  it('returns the error and hint a server without a GPU reports', async () => {
    const { settings, requests } = serverAnswering(200, NO_DRIVER_STATUS);

    const status = await fetchStatus(settings);

    expect(requestedUrl(requests[0]).href).toBe(
      'http://localhost/user/alice/gpu-monitor/api/status'
    );
    expect(status.error?.kind).toBe('not_installed');
    expect(status.error?.hint).toBe(NO_DRIVER_STATUS.error?.hint);
  });

  it.each([403, 500])(
    'turns a %d into a ResponseError with the message the server sent',
    async code => {
      const body: IErrorBody = {
        message: `the server says no (${code})`,
        reason: null
      };
      const { settings } = serverAnswering(code, body);

      const failure = fetchStatus(settings);

      await expect(failure).rejects.toBeInstanceOf(
        ServerConnection.ResponseError
      );
      await expect(failure).rejects.toHaveProperty(
        'message',
        `the server says no (${code})`
      );
      await expect(failure).rejects.toHaveProperty('response.status', code);
    }
  );

  it('turns an unreachable server into a NetworkError', async () => {
    const settings = ServerConnection.makeSettings({
      baseUrl: HUB_BASE_URL,
      fetch: () => Promise.reject(new TypeError('Failed to fetch'))
    });

    await expect(fetchStatus(settings)).rejects.toBeInstanceOf(
      ServerConnection.NetworkError
    );
  });
});

describe('fetchKernels', () => {
  it("reads this server's kernels from `kernels`, most GPU memory first", async () => {
    const { settings, requests } = serverAnswering(200, a5000Kernels());

    const kernels = await fetchKernels(settings);

    expect(requestedUrl(requests[0]).href).toBe(
      'http://localhost/user/alice/gpu-monitor/api/kernels'
    );
    expect(
      kernels.map(kernel => [kernel.session_path, kernel.memory_used_mib])
    ).toEqual([
      ['train.ipynb', 39676],
      ['idle.ipynb', 0]
    ]);
  });
});

describe('fetchSpans', () => {
  it("posts the spans to the kernel's `spans` and returns the figures in order", async () => {
    const { settings, requests } = serverAnswering(200, a5000KernelSpans());
    const spans = [
      { start: 1796015468.44, end: 1796015469.24 },
      { start: 1796015462.6, end: 1796015469.64 }
    ];

    const answer = await fetchSpans(settings, 'ef726653-e9c2', spans);

    expect(requests[0].method).toBe('POST');
    expect(requestedUrl(requests[0]).href).toBe(
      'http://localhost/user/alice/gpu-monitor/api/kernels/ef726653-e9c2/spans'
    );
    expect(await requests[0].json()).toEqual({ spans });
    expect(answer.spans.map(span => span.peak_memory_mib)).toEqual([
      null,
      39676,
      39676,
      null,
      39676
    ]);
  });
});
