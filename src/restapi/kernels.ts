/**
 * Kernels and their GPU use: GET kernels, POST kernels/<kernel_id>/spans and POST kernels/<kernel_id>/release-cached-memory.
 *
 * Generated from api_schema/kernels.json by `jlpm build:schemas`; do not edit.
 */

/**
 * The spans, at most 2000 in one request.
 */
export const MAX_SPANS_PER_REQUEST = 2000;

/**
 * The memory a kernel (its process and descendants) holds on one GPU.
 */
export interface IKernelGpuUsage {
  /**
   * The GPU index.
   */
  index: number;
  /**
   * The GPU UUID.
   */
  uuid: string | null;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * The memory the kernel's processes hold on this GPU, in MiB.
   */
  memory_used_mib: number;
  /**
   * The GPU's utilisation, in percent.
   */
  utilization_gpu: number | null;
  /**
   * Since when the kernel has held this GPU idle, in seconds since the epoch: at least the held-memory rule's MiB here (`HeldMemoryMib` in rules.json), the GPU under the low-utilisation rule (`LowUtilizationPercent`) and the kernel idle, at every read since then and since its last activity; null while any of the three does not hold.
   */
  idle_held_since: number | null;
}

/**
 * One of this server's kernels and the GPU memory it holds (its process and descendants).
 */
export interface IKernelSummary {
  /**
   * The kernel id.
   */
  kernel_id: string;
  /**
   * The kernelspec name.
   */
  name: string;
  /**
   * The kernel's process id; null for a remote kernel.
   */
  pid: number | null;
  /**
   * Whether the kernel runs elsewhere (a gateway), out of the server's sight.
   */
  remote: boolean;
  /**
   * `idle`, `busy`, `starting`... as the kernel manager last saw it.
   */
  execution_state: string | null;
  /**
   * The notebook or console the kernel serves; null without a session.
   */
  session_path: string | null;
  /**
   * `notebook` or `console`; null without a session.
   */
  session_type: string | null;
  /**
   * The GPU memory the kernel holds on all GPUs, in MiB.
   */
  memory_used_mib: number;
  /**
   * The GPUs it holds memory on.
   */
  gpus: IKernelGpuUsage[];
  /**
   * CPU the kernel and its descendants used between the last two reads, in percent of one core (400: four cores busy); null before two reads, and for a remote kernel.
   */
  cpu_percent: number | null;
  /**
   * Resident memory of the kernel and its descendants at the last read, in MiB; null before a read, and for a remote kernel.
   */
  memory_rss_mib: number | null;
  /**
   * How many processes the kernel's tree has, its own included; null as for `memory_rss_mib`.
   */
  processes: number | null;
}

/**
 * The answer of `GET kernels`: every kernel of this server, most GPU memory first.
 */
export type KernelList = IKernelSummary[];

/**
 * A span of time: a cell's run, from its `execute_input` to the `idle` that answered it.
 */
export interface ISpan {
  /**
   * The span's start, in seconds since the epoch.
   */
  start: number;
  /**
   * The span's end, in seconds since the epoch, at or after `start`.
   */
  end: number;
}

/**
 * The body of `POST kernels/<kernel_id>/spans`: the spans (cell runs) whose GPU figures are asked for. Together they may cover at most twice the reads the history holds, and one more per span: a kernel runs one cell at a time.
 */
export interface ISpansRequest {
  /**
   * The spans, at most 2000 in one request.
   *
   * @maxItems 2000
   */
  spans: ISpan[];
}

/**
 * A kernel's figures on one GPU over a span of time.
 */
export interface ISpanGpuFigures {
  /**
   * The GPU index.
   */
  index: number;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * The most memory the kernel held on this GPU during the span, in MiB.
   */
  peak_memory_mib: number;
  /**
   * The memory the kernel held on this GPU as the span started (the server's last read before it, else its first read inside it), in MiB: the peak less this is what the span added.
   */
  start_memory_mib: number;
  /**
   * The GPU's mean utilisation during the span, in percent.
   */
  mean_utilization: number | null;
  /**
   * The GPU's highest utilisation during the span, in percent.
   */
  peak_utilization: number | null;
}

/**
 * A kernel's GPU figures over one span of time (a cell's run), from the server's full-resolution history.
 */
export interface ISpanFigures {
  /**
   * The span's start, in seconds since the epoch.
   */
  start: number;
  /**
   * The span's end, in seconds since the epoch.
   */
  end: number;
  /**
   * The span's length, in seconds.
   */
  duration_seconds: number;
  /**
   * How many server reads fall inside the span.
   */
  samples: number;
  /**
   * Whether the span is shorter than two reads: then there are no figures.
   */
  too_short: boolean;
  /**
   * Whether the server did not read the GPUs during part of the span.
   */
  gap: boolean;
  /**
   * The most memory the kernel held on all GPUs at one read, in MiB; null when it held none or the span was not measured.
   */
  peak_memory_mib: number | null;
  /**
   * The mean utilisation of the GPUs the kernel held memory on, in percent.
   */
  mean_utilization: number | null;
  /**
   * The highest utilisation of those GPUs, in percent.
   */
  peak_utilization: number | null;
  /**
   * The mean CPU of the kernel and the processes it started over the span, in percent of one core (400 is four cores busy); null when the span was not measured.
   */
  mean_cpu_percent: number | null;
  /**
   * The GPUs the kernel held memory on during the span.
   */
  gpus: ISpanGpuFigures[];
}

/**
 * The answer of `POST kernels/<kernel_id>/spans`.
 */
export interface ISpansAnswer {
  /**
   * The time between two server reads, in seconds.
   */
  interval_seconds: number;
  /**
   * The figures of each span asked for, in order.
   */
  spans: ISpanFigures[];
}

/**
 * What releasing a kernel's cached GPU memory did: `torch_not_imported` (nothing done, nothing imported), `cuda_not_initialized` (torch is imported but never used a GPU in this kernel: nothing to release), `released` (`gc.collect()` and `torch.cuda.empty_cache()` ran).
 */
export type CacheReleaseOutcome =
  'torch_not_imported' | 'cuda_not_initialized' | 'released';

/**
 * The answer of `POST kernels/<kernel_id>/release-cached-memory`: the memory PyTorch's caching allocator held reserved on all GPUs before and after `torch.cuda.empty_cache()` ran silently in the kernel. A busy kernel is refused (409), one that does not answer within seconds is given up (504).
 */
export interface ICacheReleaseAnswer {
  outcome: CacheReleaseOutcome;
  /**
   * The memory torch held reserved on all GPUs before, in bytes; null unless `released`.
   */
  reserved_before_bytes: number | null;
  /**
   * The memory torch held reserved on all GPUs after, in bytes; null unless `released`.
   */
  reserved_after_bytes: number | null;
  /**
   * What the GPUs got back, in bytes; null unless `released`.
   */
  released_bytes: number | null;
}
