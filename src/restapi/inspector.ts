/**
 * The kernel-environment inspector: GET probe, the probe's answer (run inside the kernel) and POST diagnose.
 *
 * Generated from api_schema/inspector.json by `jlpm build:schemas`; do not edit.
 */

/**
 * The answer of `GET probe?deep=0|1&packages=a,b`: the kernel probe as one Python expression, for a silent execute's `user_expressions`.
 */
export interface IProbeExpression {
  /**
   * The expression; its value's repr is the probe's JSON answer.
   */
  expression: string;
  /**
   * Whether it imports torch to ask it about CUDA.
   */
  deep: boolean;
}

export type Path = string;

export type OptionalPath = string | null;

export type Version = string;

export type OptionalVersion = string | null;

/**
 * What the probe learnt from torch: only when the user had imported it, or a deep check imported it.
 */
export interface ITorchFacts {
  /**
   * `torch.__version__`, e.g. `2.13.0+cpu`.
   */
  version: OptionalVersion;
  /**
   * `torch.version.cuda`: the CUDA version torch is built for; null for a CPU-only build.
   */
  cuda?: OptionalVersion;
  /**
   * `torch.cuda.is_available()`.
   */
  cuda_available?: boolean;
  /**
   * `torch.cuda.is_initialized()`: whether the kernel already made a CUDA context, after which CUDA's environment variables no longer apply.
   */
  cuda_initialized?: boolean;
  /**
   * How many GPUs torch sees.
   */
  device_count?: number;
  /**
   * The names of the GPUs torch sees, in its order; null unless the kernel already initialised CUDA (naming them would).
   *
   * @maxItems 1024
   */
  devices?: Version[] | null;
  /**
   * The cuDNN version, e.g. 90100; null without CUDA.
   */
  cudnn?: number | null;
  /**
   * Whether the probe imported torch (a deep check) rather than the user.
   */
  imported_by_probe?: boolean;
  /**
   * Why `import torch` failed, when it did.
   */
  import_error?: string;
  /**
   * Why asking torch about CUDA failed, when it did.
   */
  error?: string;
}

/**
 * The kernel probe's answer (kernel/probe.py, run inside the kernel): the kernel's own view of its environment.
 */
export interface IKernelProbe {
  /**
   * `sys.executable`.
   */
  executable: Path;
  /**
   * `sys.prefix`: the environment the kernel runs in.
   */
  prefix: Path;
  /**
   * `sys.base_prefix`: the Python a venv was made from.
   */
  base_prefix: Path;
  /**
   * The Python version, e.g. `3.11.7`.
   */
  python_version: Version;
  /**
   * The Python implementation, e.g. `CPython`.
   */
  implementation: Version;
  /**
   * `CONDA_DEFAULT_ENV` in the kernel.
   */
  conda_default_env: OptionalPath;
  /**
   * `CONDA_PREFIX` in the kernel.
   */
  conda_prefix: OptionalPath;
  /**
   * `VIRTUAL_ENV` in the kernel.
   */
  virtual_env: OptionalPath;
  /**
   * `CUDA_VISIBLE_DEVICES` in the kernel now; null when it is not set.
   */
  cuda_visible_devices: string | null;
  /**
   * The version of each distribution asked about (from `importlib.metadata`); null when not installed.
   */
  packages: {
    [k: string]: OptionalVersion;
  };
  /**
   * What torch says, when it is imported; null otherwise.
   */
  torch: ITorchFacts | null;
  /**
   * Whether this was a deep check (torch imported to ask it).
   */
  deep: boolean;
}

/**
 * The body of `POST diagnose`: a kernel of this server to diagnose, with the probe's answer when the frontend has one.
 */
export interface IDiagnoseRequest {
  /**
   * The kernel id.
   */
  kernel_id: string;
  /**
   * The probe's answer; null or absent when the kernel was not probed.
   */
  probe?: IKernelProbe | null;
  /**
   * The environment the notebook's fingerprint recorded.
   */
  expected_prefix?: OptionalPath;
}

/**
 * How bad a finding is.
 */
export type FindingSeverity = 'error' | 'warning' | 'info';

/**
 * The rule a finding comes from (diagnose.py).
 */
export type FindingId =
  | 'cpu-only-torch'
  | 'torch-import-fails'
  | 'torch-cuda-newer-than-driver'
  | 'cuda-visible-devices-hides-all'
  | 'cuda-visible-devices-unknown-gpu'
  | 'kernel-not-in-recorded-environment'
  | 'kernelspec-depends-on-path'
  | 'kernel-not-in-kernelspec-environment'
  | 'conda-and-pip-duplicate'
  | 'driver-failure'
  | 'gpus-unreadable'
  | 'gpu-idle-while-holding-memory'
  | 'gpu-slows-down'
  | 'python-older-than-3.11'
  | 'kernel-interpreter-missing';

/**
 * One problem found in a kernel's environment, how it was found, and the command or code that fixes it.
 */
export interface IFinding {
  /**
   * A stable id of the rule.
   */
  id: FindingId;
  /**
   * How bad it is.
   */
  severity: FindingSeverity;
  /**
   * What is wrong, in one line.
   */
  title: string;
  /**
   * The facts that show it.
   */
  evidence: string;
  /**
   * The command or code that fixes it; empty when there is none to run.
   */
  fix: string;
  /**
   * Whether the kernel must restart once the fix ran: it changes what the running kernel has loaded (packages, CUDA_VISIBLE_DEVICES).
   */
  restart: boolean;
}

/**
 * What the server reads of a kernel's process, without a round trip.
 */
export interface IKernelProcess {
  /**
   * The kernel's process id.
   */
  pid: number;
  /**
   * The interpreter the kernel was launched with.
   */
  interpreter: string | null;
  /**
   * `/proc/<pid>/exe`: the binary, symlinks resolved.
   */
  executable: string | null;
  /**
   * The environment the interpreter belongs to.
   */
  prefix: string | null;
  /**
   * The kind of that environment.
   */
  env_kind: 'conda' | 'venv' | 'system' | null;
  /**
   * The variables the kernel started with: `CUDA_VISIBLE_DEVICES`, `CONDA_PREFIX`, `CONDA_DEFAULT_ENV`, `VIRTUAL_ENV`, `LD_LIBRARY_PATH`.
   */
  variables: {
    [k: string]: string | null;
  };
  /**
   * False when the process could not be read (another user's, or gone).
   */
  readable: boolean;
}

/**
 * The answer of `POST diagnose`: what the server sees of a kernel, completed by the probe's answer when one was sent, and the findings, errors first.
 */
export interface IDiagnosis {
  /**
   * The kernel id.
   */
  kernel_id: string;
  /**
   * The kernelspec name.
   */
  kernelspec: string | null;
  /**
   * Whether the kernel has no local process (a gateway's kernel).
   */
  remote: boolean;
  /**
   * The kernel's process; null for a remote kernel.
   */
  process: IKernelProcess | null;
  /**
   * The environment the kernel runs in.
   */
  prefix: string | null;
  /**
   * Which sources answered: the server (always), the probe (when sent).
   */
  sources: {
    server: boolean;
    probe: boolean;
  };
  /**
   * The CUDA build of the kernel's torch, from the best evidence there is (the probe, pip's local version, the conda build string): the CUDA version (`12.1`), `cpu` for a CPU-only build, null when torch is not there or its build is unknown.
   */
  torch_cuda: string | null;
  /**
   * What is wrong, errors first.
   */
  findings: IFinding[];
}
