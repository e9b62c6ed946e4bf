/**
 * GPU readings: GET gpus, GET gpus/history, GET status and GET lab. Percent 0-100, MiB, degrees Celsius, watts, MHz; null wherever the device or the source does not report a value, never 0.
 *
 * Generated from api_schema/gpus.json by `jlpm build:schemas`; do not edit.
 */

/**
 * Where readings come from.
 */
export type GpuSourceName = 'nvml' | 'nvidia-smi' | 'prometheus';

/**
 * What went wrong reading the GPUs, as the server classifies it (the keys of gpu/errors.py HINTS).
 */
export type GpuErrorKind =
  | 'not_installed'
  | 'driver_not_loaded'
  | 'version_mismatch'
  | 'no_devices'
  | 'gpu_lost'
  | 'permission'
  | 'timeout'
  | 'bad_output'
  | 'unknown';

/**
 * A failure to read the GPUs, with a readable message and a fix hint.
 */
export interface IGpuError {
  /**
   * The class of failure.
   */
  kind: GpuErrorKind;
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
 * One MIG (Multi-Instance GPU) device of a physical GPU.
 */
export interface IMigDevice {
  /**
   * The MIG device index within its GPU.
   */
  index: number;
  /**
   * The MIG device UUID.
   */
  uuid: string | null;
  /**
   * The MIG profile, e.g. `1g.10gb`.
   */
  profile: string | null;
  /**
   * The GPU instance id.
   */
  gpu_instance_id: number | null;
  /**
   * The compute instance id.
   */
  compute_instance_id: number | null;
  /**
   * The memory of this MIG device, in MiB.
   */
  memory_total_mib: number | null;
  /**
   * The memory in use on this MIG device, in MiB.
   */
  memory_used_mib: number | null;
  /**
   * The share of time the instance's graphics engine was busy, in percent: only DCGM (the Prometheus source) measures it.
   */
  utilization_gpu: number | null;
}

/**
 * A compute process running on a GPU; the fields after `gpu_instance_id` are this server's view of it (the kernel join).
 */
export interface IGpuProcess {
  /**
   * The process id, as the driver reports it (host PID namespace).
   */
  pid: number;
  /**
   * The GPU memory the process holds, in MiB.
   */
  used_memory_mib: number | null;
  /**
   * The process name (its command); null for another user's process unless the server is configured to send it.
   */
  name: string | null;
  /**
   * The process type as the driver reports it: `C` compute, `G` graphics, `C+G`.
   */
  type: string | null;
  /**
   * The GPU instance the process runs in, under MIG.
   */
  gpu_instance_id: number | null;
  /**
   * The share of the time since the read before that the process ran on the GPU's streaming multiprocessors, in percent: NVML only, 0 for a process that did not run.
   */
  utilization_gpu: number | null;
  /**
   * Whether the process exists in the server's PID namespace; false when the driver reports a pid of another namespace (a container), null when not joined. An invisible process has no user, start, kernel or name.
   */
  visible: boolean | null;
  /**
   * The user the process runs as.
   */
  user: string | null;
  /**
   * When the process started, in seconds since the epoch.
   */
  started: number | null;
  /**
   * Whether the process runs as the user this server runs as.
   */
  own: boolean | null;
  /**
   * The kernel of this server the process is, or descends from.
   */
  kernel_id: string | null;
  /**
   * The notebook (or console) whose kernel runs the process.
   */
  session_path: string | null;
  /**
   * The whole command line (its first 1000 characters); for a process of this server's user only.
   */
  command: string | null;
  /**
   * The CPU the process used since the read before, in percent of one core; for a process of this server's user only, null at its first read.
   */
  cpu_percent: number | null;
  /**
   * The process's resident host memory, in MiB; for a process of this server's user only.
   */
  host_memory_mib: number | null;
}

/**
 * One physical GPU at one point in time. A measurement is null when it cannot be read; `unavailable` says why when the reason is known.
 */
export interface IGpu {
  /**
   * The GPU index, as nvidia-smi numbers it.
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
   * The PCI bus id.
   */
  pci_bus_id: string | null;
  /**
   * The share of time a kernel ran on the GPU, in percent.
   */
  utilization_gpu: number | null;
  /**
   * The share of time device memory was read or written, in percent.
   */
  utilization_memory: number | null;
  /**
   * The total device memory, in MiB.
   */
  memory_total_mib: number | null;
  /**
   * The device memory in use, in MiB.
   */
  memory_used_mib: number | null;
  /**
   * The free device memory, in MiB.
   */
  memory_free_mib: number | null;
  /**
   * The core temperature, in degrees Celsius.
   */
  temperature_c: number | null;
  /**
   * The temperature from which the GPU slows its clocks to cool down (the driver's slowdown threshold), in degrees Celsius.
   */
  temperature_slowdown_c: number | null;
  /**
   * The power draw, in watts.
   */
  power_draw_w: number | null;
  /**
   * The power limit, in watts.
   */
  power_limit_w: number | null;
  /**
   * The energy the GPU consumed since the driver loaded, in joules (Volta and later).
   */
  energy_consumed_j: number | null;
  /**
   * The fan speed, in percent of its maximum.
   */
  fan_speed_pct: number | null;
  /**
   * The streaming multiprocessor clock, in MHz.
   */
  sm_clock_mhz: number | null;
  /**
   * The memory clock, in MHz.
   */
  memory_clock_mhz: number | null;
  /**
   * The performance state, from P0 (the most performance) to P15 (the least).
   */
  performance_state: string | null;
  /**
   * The share of time the video encoder was busy, in percent.
   */
  encoder_utilization: number | null;
  /**
   * The share of time the video decoder was busy, in percent.
   */
  decoder_utilization: number | null;
  /**
   * What holds the clocks below their maximum now (the driver's clock event reasons); empty when nothing does, null when the driver does not say.
   */
  clock_throttle_reasons: ClockThrottleReason[] | null;
  /**
   * Bytes the GPU sent over PCIe per second: NVML's counters between two reads where the driver has them, else its 20 ms sample of the bus taken every 10 s; nvidia-smi's sample in the XML it reads every 30 s; DCGM's rate.
   */
  pcie_sent_bytes_per_second: number | null;
  /**
   * Bytes the GPU received over PCIe per second, read as `pcie_sent_bytes_per_second`.
   */
  pcie_received_bytes_per_second: number | null;
  /**
   * Data the GPU sent over all its NVLinks per second: NVML's counters between two reads, or DCGM's rate; null without NVLink, and through nvidia-smi.
   */
  nvlink_sent_bytes_per_second: number | null;
  /**
   * Data the GPU received over all its NVLinks per second, read as `nvlink_sent_bytes_per_second`.
   */
  nvlink_received_bytes_per_second: number | null;
  /**
   * Memory errors ECC corrected since the driver loaded; null where ECC is off or absent.
   */
  ecc_errors_corrected: number | null;
  /**
   * Memory errors ECC could not correct since the driver loaded: the data of the process that met one is wrong.
   */
  ecc_errors_uncorrected: number | null;
  /**
   * Memory pages retired for good after ECC errors (GPUs before Ampere).
   */
  retired_pages: number | null;
  /**
   * Memory rows remapped for good after ECC errors (Ampere and later).
   */
  remapped_rows: number | null;
  /**
   * Whether a page retirement or row remap waits for the GPU's next reset to take effect.
   */
  memory_repair_pending: boolean | null;
  /**
   * Whether MIG is enabled on this GPU; null where MIG does not exist.
   */
  mig_mode: 'enabled' | 'disabled' | null;
  /**
   * The MIG devices of this GPU, empty when MIG is off.
   */
  mig_devices: IMigDevice[];
  /**
   * The compute processes running on this GPU.
   */
  processes: IGpuProcess[];
  /**
   * How many processes of this read are not in `processes`: a read keeps the 256 that hold the most memory on a GPU.
   */
  processes_omitted: number;
  /**
   * Why a null field is null, by field name, e.g. `utilization_gpu: 'not available under MIG'`.
   */
  unavailable: {
    [k: string]: string;
  };
  /**
   * What went wrong reading this GPU (it fell off the bus), if anything.
   */
  error: IGpuError | null;
}

/**
 * Why the clocks are held down, as nvidia-smi names it: `gpu_idle` (nothing to do), `applications_clocks_setting` and `display_clocks_setting` (clocks set lower), `sw_power_cap` (at the power limit), `sw_thermal_slowdown`, `hw_thermal_slowdown` (too hot), `hw_slowdown`, `hw_power_brake_slowdown` (the board's power supply or an external signal), `sync_boost` (held to the slowest GPU of a group).
 */
export type ClockThrottleReason =
  | 'gpu_idle'
  | 'applications_clocks_setting'
  | 'sw_power_cap'
  | 'hw_slowdown'
  | 'sync_boost'
  | 'sw_thermal_slowdown'
  | 'hw_thermal_slowdown'
  | 'hw_power_brake_slowdown'
  | 'display_clocks_setting';

/**
 * Whose figures a machine reading is: `container`, the cgroup's limit and use where it limits the server below the node; `host`, the node's.
 */
export type ReadingScope = 'container' | 'host';

/**
 * The machine the server runs on, read with the GPUs: CPU and memory of the container where its cgroup limits them, else of the host; disk and network throughput; the room where the notebooks are.
 */
export interface IMachineReading {
  /**
   * Whose CPU `cpu_percent` and `cpu_cores` are.
   */
  cpu_scope: ReadingScope;
  /**
   * CPU in use since the read before, in percent of `cpu_cores`; null at the first read.
   */
  cpu_percent: number | null;
  /**
   * The cores the scope has: the container's CPU quota, or the node's logical CPUs.
   */
  cpu_cores: number;
  /**
   * Each logical CPU of the node, in percent; empty at the first read.
   */
  cpu_core_percents: number[];
  /**
   * Whose memory the memory and swap figures are.
   */
  memory_scope: ReadingScope;
  /**
   * Memory in use, in MiB: the container's less its inactive file cache (as `docker stats` counts it), or the host's total less what is available.
   */
  memory_used_mib: number | null;
  /**
   * The memory limit of the container, or the host's memory, in MiB.
   */
  memory_total_mib: number | null;
  /**
   * Swap in use, in MiB.
   */
  swap_used_mib: number | null;
  /**
   * Swap there is, in MiB (0: none).
   */
  swap_total_mib: number | null;
  /**
   * Read from the node's disks since the read before, in bytes per second; null at the first read.
   */
  disk_read_bytes_per_second: number | null;
  /**
   * Written to the node's disks since the read before, in bytes per second.
   */
  disk_write_bytes_per_second: number | null;
  /**
   * Received on the network interfaces the server sees (a container's own) since the read before, in bytes per second.
   */
  network_received_bytes_per_second: number | null;
  /**
   * Sent on those interfaces since the read before, in bytes per second.
   */
  network_sent_bytes_per_second: number | null;
  /**
   * The folder the notebooks are in (the server's root_dir).
   */
  root_dir: string;
  /**
   * Free space of its file system, in MiB.
   */
  root_dir_free_mib: number | null;
  /**
   * Size of its file system, in MiB.
   */
  root_dir_total_mib: number | null;
  /**
   * Why a figure is null, by its name, where the reason is known.
   */
  unavailable: {
    [k: string]: string;
  };
}

/**
 * The machine's figures at each sample of a history, aligned with its `timestamps` (null where a sample has none).
 */
export interface IMachineSeries {
  /**
   * CPU in use, in percent of the scope's cores.
   */
  cpu_percent: SeriesValues;
  /**
   * Memory in use, in MiB.
   */
  memory_used_mib: SeriesValues;
  /**
   * The memory there is, in MiB.
   */
  memory_total_mib: SeriesValues;
  /**
   * Swap in use, in MiB.
   */
  swap_used_mib: SeriesValues;
  /**
   * Disk reads, in bytes per second.
   */
  disk_read_bytes_per_second: SeriesValues;
  /**
   * Disk writes, in bytes per second.
   */
  disk_write_bytes_per_second: SeriesValues;
  /**
   * Network received, in bytes per second.
   */
  network_received_bytes_per_second: SeriesValues;
  /**
   * Network sent, in bytes per second.
   */
  network_sent_bytes_per_second: SeriesValues;
}

/**
 * The answer of `GET gpus`: every GPU at one point in time, or why they could not be read, and the machine beside them.
 */
export interface IGpuSnapshot {
  /**
   * The source the sample was read from; null when no source works.
   */
  source: GpuSourceName | null;
  /**
   * When the sample was read, in seconds since the epoch.
   */
  timestamp: number;
  /**
   * The NVIDIA driver version.
   */
  driver_version: string | null;
  /**
   * The highest CUDA version the driver supports.
   */
  cuda_version: string | null;
  /**
   * What went wrong reading the GPUs, if anything.
   */
  error: IGpuError | null;
  /**
   * The GPUs, by index.
   */
  gpus: IGpu[];
  /**
   * The machine at the same moment, read by the server whatever the GPUs did; null where it was not read (the CLI's snapshot reads the GPUs alone).
   */
  machine: IMachineReading | null;
}

/**
 * One value per timestamp, null where there is no reading.
 */
export type SeriesValues = (number | null)[];

/**
 * The sampled history of one GPU; every series has one value per timestamp.
 */
export interface IGpuSeries {
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
   * GPU utilisation, in percent.
   */
  utilization_gpu: SeriesValues;
  /**
   * Memory controller utilisation, in percent.
   */
  utilization_memory: SeriesValues;
  /**
   * Device memory in use, in MiB.
   */
  memory_used_mib: SeriesValues;
  /**
   * Total device memory, in MiB.
   */
  memory_total_mib: SeriesValues;
  /**
   * Core temperature, in degrees Celsius.
   */
  temperature_c: SeriesValues;
  /**
   * Power draw, in watts.
   */
  power_draw_w: SeriesValues;
  /**
   * Fan speed, in percent.
   */
  fan_speed_pct: SeriesValues;
  /**
   * Streaming multiprocessor clock, in MHz.
   */
  sm_clock_mhz: SeriesValues;
  /**
   * Bytes the GPU received over PCIe per second.
   */
  pcie_received_bytes_per_second: SeriesValues;
  /**
   * Bytes the GPU received over its NVLinks per second.
   */
  nvlink_received_bytes_per_second: SeriesValues;
}

/**
 * The answer of `GET gpus/history?since=<epoch seconds>`: the samples taken after `since` (all the server keeps without it), columnar.
 */
export interface IGpuHistory {
  /**
   * The time between two samples, in seconds.
   */
  interval_seconds: number;
  /**
   * How far back the server keeps samples, in seconds.
   */
  history_seconds: number;
  /**
   * When each sample was read, in seconds since the epoch, oldest first.
   */
  timestamps: number[];
  /**
   * How far apart the server was reading when it took each sample: its interval, or, while only clients that ask seldom asked (no chart shown), their period. Samples further apart than a few of these have a gap between them.
   */
  spacing_seconds: number[];
  /**
   * One series per GPU, by index.
   */
  gpus: IGpuSeries[];
  /**
   * The machine's figures at each sample; null when no sample has them.
   */
  machine: IMachineSeries | null;
}

/**
 * The answer of `GET status`: how the server reads the GPUs.
 */
export interface IServerStatus {
  /**
   * The version of the server extension.
   */
  version: string;
  /**
   * The source in use; null when no source works.
   */
  source: GpuSourceName | null;
  /**
   * The source the server is configured to use (`GpuMonitor.source`).
   */
  source_setting: 'auto' | 'nvml' | 'nvidia-smi' | 'prometheus';
  /**
   * The time between two samples, in seconds.
   */
  interval_seconds: number;
  /**
   * How far back samples are kept, in seconds.
   */
  history_seconds: number;
  /**
   * How long the sampler keeps running after the last client asked, in seconds.
   */
  idle_seconds: number;
  /**
   * Whether the sampler is running now.
   */
  sampling: boolean;
  /**
   * How many times the server has read the GPUs since it started.
   */
  reads: number;
  /**
   * The NVIDIA driver version, from the latest good read.
   */
  driver_version: string | null;
  /**
   * The highest CUDA version the driver supports, from the latest good read.
   */
  cuda_version: string | null;
  /**
   * What went wrong reading the GPUs, if anything.
   */
  error: IGpuError | null;
}

/**
 * A user's notebook that holds memory on a GPU of the lab.
 */
export interface ILabHolder {
  /**
   * The user of the server whose kernels hold it (its `user` label in /metrics).
   */
  user: string;
  /**
   * The notebook as that server's `GpuMonitor.metrics_notebook_label` names it: a hash of its path by default, its path, or empty. The asking user's own notebook that held a GPU on the asking server is named by its path instead of its hash.
   */
  notebook: string;
  /**
   * The memory its kernels hold on the GPU, in MiB.
   */
  memory_used_mib: number;
  /**
   * Whether it is a notebook of the user of the server that answers.
   */
  own: boolean;
}

/**
 * One GPU of a machine of the lab, once however many servers of the machine report it.
 */
export interface ILabGpu {
  /**
   * The GPU UUID.
   */
  uuid: string;
  /**
   * The GPU index on its machine; -1 where its series has no `gpu` label.
   */
  index: number;
  /**
   * The product name.
   */
  name: string | null;
  /**
   * Utilisation at the latest scrape, in percent.
   */
  utilization_gpu: number | null;
  /**
   * Memory in use at the latest scrape, in MiB.
   */
  memory_used_mib: number | null;
  /**
   * Memory there is, in MiB.
   */
  memory_total_mib: number | null;
  /**
   * Whether nobody holds the held-memory rule's MiB (`HeldMemoryMib`) on it.
   */
  free: boolean;
  /**
   * Since when it has been under the low-utilization line (`LowUtilizationPercent`), in seconds since the epoch, looked for at most 6 h back (then: since it was first seen in those 6 h); null while it is at the line or over, or its utilization is not known.
   */
  idle_since: number | null;
  /**
   * The notebooks of the lab's servers that hold memory on it, most first.
   */
  holders: ILabHolder[];
}

/**
 * One machine of the lab: its `host` label in /metrics.
 */
export interface ILabNode {
  /**
   * The machine's host name (`GpuMonitor.metrics_host` of its servers).
   */
  host: string;
  /**
   * Whether its newest sample is within two of its scrape intervals. A machine whose samples stop coming (a federated Prometheus) keeps its last GPUs; one whose scrapes fail has none (Prometheus marks its series stale at once).
   */
  reporting: boolean;
  /**
   * When its newest sample was scraped, in seconds since the epoch; null for one seen in the last day but not now (its scrapes fail, or it stopped more than Prometheus' lookback of 5 min ago).
   */
  last_seen: number | null;
  /**
   * Where the user who asks starts working on the machine: the admin's `GpuMonitor.lab_open_url` with its `{node}` and `{user}` filled in; null without one.
   */
  open_url: string | null;
  /**
   * Its GPUs, by index.
   */
  gpus: ILabGpu[];
  /**
   * Where no server with the extension reports the machine, the exporter the lab scrapes there, whose GPUs these are (without notebooks): `DCGM exporter` or `nvidia_gpu_exporter`; its host is DCGM's `Hostname` label, else the scrape target's host. Listed for a day after its exporter last reported, as not reporting once it stops. null for a machine of the lab's servers.
   */
  exporter: string | null;
}

/**
 * Every machine of the lab, from the Prometheus that scrapes every server (`GpuMonitor.lab_prometheus_url`).
 */
export interface ILabView {
  /**
   * Whether `GpuMonitor.lab_prometheus_url` names a lab's Prometheus; without one `error` says so (kind `not_installed`) and there are no machines.
   */
  configured: boolean;
  /**
   * When the lab was read, on Prometheus' clock, in seconds since the epoch.
   */
  timestamp: number;
  /**
   * The user of the server that answers, whose notebooks are `own`.
   */
  user: string;
  /**
   * The machine of the server that answers (its `host` label in /metrics).
   */
  host: string;
  /**
   * Why the lab's Prometheus could not be read (then `nodes` is empty), or null.
   */
  error: IGpuError | null;
  /**
   * The machines, by host.
   */
  nodes: ILabNode[];
  /**
   * How many machines are reporting.
   */
  reporting: number;
  /**
   * How many machines Prometheus has seen in the last day.
   */
  known: number;
}

/**
 * One notebook's GPU-hours over the period, on every machine it ran on.
 */
export interface ILabLedgerRow {
  /**
   * The user of the server whose kernels ran it (its `user` label).
   */
  user: string;
  /**
   * The notebook as that server's `GpuMonitor.metrics_notebook_label` names it: a hash of its path by default, its path, or empty (then a row is a user's notebooks together). The asking user's own notebook that held a GPU on the asking server is named by its path instead of its hash.
   */
  notebook: string;
  /**
   * Whether it is a notebook of the user of the server that answers.
   */
  own: boolean;
  /**
   * GPU-hours its kernels kept GPUs busy (at the low-utilization line or over), shared by memory on a shared GPU.
   */
  busy_hours: number;
  /**
   * GPU-hours its kernels held at least `HeldMemoryMib` on a GPU under the low-utilization line: memory nobody else could use, for nothing.
   */
  idle_held_hours: number;
}

/**
 * Each notebook's GPU-hours busy and idle-held over a period, from the recording rules of `prometheus/lab.yml` on the lab's Prometheus.
 */
export interface ILabLedger {
  /**
   * Whether `GpuMonitor.lab_prometheus_url` names a lab's Prometheus; without one `error` says so.
   */
  configured: boolean;
  /**
   * The end of the period, in seconds since the epoch.
   */
  timestamp: number;
  /**
   * The period's length, in seconds: whole hours, the last of which ends at `timestamp`.
   */
  since_seconds: number;
  /**
   * The user of the server that answers, whose notebooks are `own`.
   */
  user: string;
  /**
   * Why the lab's Prometheus could not be read (then `notebooks` is empty), or null.
   */
  error: IGpuError | null;
  /**
   * Every notebook that held a GPU in the period, the most idle-held hours first, then the most busy. Empty as well where the lab's Prometheus does not load the rules.
   */
  notebooks: ILabLedgerRow[];
}
