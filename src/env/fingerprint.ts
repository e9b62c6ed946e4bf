import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';

import { IDriftFinding, IEnvironmentFingerprint } from '../tokens';
import { IEnvironment } from '../restapi/envs';
import { IGpuSnapshot } from '../restapi/gpus';
import { IKernelProbe } from '../restapi/inspector';
import { formatDay } from '../format/units';
import { visibleGpuIndices } from './gpus';

/**
 * What a fingerprint is made of.
 */
export interface IFingerprintSource {
  /**
   * The probe's answer.
   */
  probe: IKernelProbe;
  /**
   * The environment of the server's listing the kernel runs in, if listed.
   */
  environment: IEnvironment | null;
  /**
   * The GPUs now; null when they cannot be read.
   */
  snapshot: IGpuSnapshot | null;
  /**
   * The CUDA build of the kernel's torch, as the server's diagnosis says it.
   */
  torchCuda: string | null;
  /**
   * The date to record.
   */
  now: Date;
}

/**
 * One way the kernel differs from the fingerprint.
 */
export interface IFingerprintChange {
  /**
   * What differs.
   */
  kind: 'python' | 'package' | 'torch-cuda' | 'gpus' | 'driver';
  /**
   * The package, for `package`.
   */
  name?: string;
  /**
   * The recorded value; null for a package that was not installed.
   */
  recorded: string | null;
  /**
   * The value now; null for a package that is not installed.
   */
  current: string | null;
}

/**
 * The fingerprint of the environment a probe describes.
 */
export function makeFingerprint(
  source: IFingerprintSource
): IEnvironmentFingerprint {
  const { probe, environment, snapshot } = source;
  const condaName =
    probe.conda_prefix === probe.prefix ? probe.conda_default_env : null;
  return {
    recorded: source.now.toISOString(),
    environment: {
      name: environment?.name ?? condaName ?? PathExt.basename(probe.prefix),
      prefix: probe.prefix,
      kind: environment?.kind ?? null
    },
    python: {
      version: probe.python_version,
      implementation: probe.implementation
    },
    packages: { ...probe.packages },
    torch_cuda: source.torchCuda,
    gpus: Private.gpus(probe, snapshot)
  };
}

/**
 * How the current environment differs from the recorded one: the Python, the
 * key packages the fingerprint recorded, torch's CUDA build, the GPU models
 * and the driver. A fact either side does not know is not compared; the
 * environment's folder is left to the server's diagnosis, which is given it.
 */
export function diffFingerprint(
  recorded: IEnvironmentFingerprint,
  current: IEnvironmentFingerprint
): IFingerprintChange[] {
  const changes: IFingerprintChange[] = [];
  const python = (fingerprint: IEnvironmentFingerprint) =>
    `${fingerprint.python.implementation} ${fingerprint.python.version}`;
  if (python(recorded) !== python(current)) {
    changes.push({
      kind: 'python',
      recorded: python(recorded),
      current: python(current)
    });
  }
  for (const name of Object.keys(recorded.packages).sort()) {
    if (!(name in current.packages)) {
      continue;
    }
    const [was, now] = [recorded.packages[name], current.packages[name]];
    if (was !== now) {
      changes.push({ kind: 'package', name, recorded: was, current: now });
    }
  }
  if (
    recorded.torch_cuda !== null &&
    current.torch_cuda !== null &&
    recorded.torch_cuda !== current.torch_cuda
  ) {
    changes.push({
      kind: 'torch-cuda',
      recorded: recorded.torch_cuda,
      current: current.torch_cuda
    });
  }
  if (recorded.gpus && current.gpus) {
    const names = (fingerprint: IEnvironmentFingerprint) =>
      [...fingerprint.gpus!.names].sort().join(', ');
    if (names(recorded) !== names(current)) {
      changes.push({
        kind: 'gpus',
        recorded: names(recorded),
        current: names(current)
      });
    }
    const driver = (fingerprint: IEnvironmentFingerprint) =>
      `${fingerprint.gpus!.driver_version} (CUDA ${fingerprint.gpus!.cuda_version})`;
    if (driver(recorded) !== driver(current)) {
      changes.push({
        kind: 'driver',
        recorded: driver(recorded),
        current: driver(current)
      });
    }
  }
  return changes;
}

/**
 * The drift as findings: what changed, since when, and the command that puts
 * the recorded version back where there is one.
 *
 * @param condaPackages - the packages conda installed in the kernel's
 *   environment (the others are pip's); empty for a venv
 * @param prefix - the kernel's environment, which each command names: the
 *   pip and conda first on a terminal's PATH may be another environment's
 * @param manager - the tool that made it (`GET envs`' `manager`): uv makes
 *   venvs without pip, whose packages `uv pip` changes
 */
export function driftFindings(
  changes: readonly IFingerprintChange[],
  recorded: IEnvironmentFingerprint,
  trans: TranslationBundle,
  condaPackages: ReadonlySet<string>,
  prefix: string,
  manager: string | null = null
): IDriftFinding[] {
  const date = formatDay(recorded.recorded);
  const pin = (name: string, version: string | null, conda: boolean) =>
    Private.pinCommand(name, version, conda, prefix, manager === 'uv');
  const none = trans.__('not installed');
  return changes.map(change => {
    const was = change.recorded ?? none;
    const now = change.current ?? none;
    switch (change.kind) {
      case 'python':
        return {
          id: 'drift-python',
          severity: 'warning',
          title: trans.__('Python %1 → %2 since the fingerprint', was, now),
          evidence: trans.__(
            'The notebook recorded Python %1 on %2; the kernel runs %3.',
            was,
            date,
            now
          ),
          fix: condaPackages.has('python')
            ? `conda install -p "${prefix}" "python=${recorded.python.version}"`
            : '',
          restart: condaPackages.has('python')
        };
      case 'package':
        return {
          id: `drift-package-${change.name}`,
          severity: 'warning',
          title: trans.__(
            '%1 %2 → %3 since the fingerprint',
            change.name!,
            was,
            now
          ),
          evidence: trans.__(
            'The notebook recorded %1 %2 on %3; the kernel has %4.',
            change.name!,
            was,
            date,
            now
          ),
          fix: pin(
            change.name!,
            change.recorded,
            condaPackages.has(change.name!)
          ),
          restart: true
        };
      case 'torch-cuda':
        return {
          id: 'drift-torch-cuda',
          severity: 'warning',
          title: trans.__(
            "PyTorch's CUDA build %1 → %2 since the fingerprint",
            was,
            now
          ),
          evidence: trans.__(
            'The notebook recorded a PyTorch built for %1 on %2; the kernel has one built for %3.',
            was,
            date,
            now
          ),
          fix: pin('torch', recorded.packages['torch'], false),
          restart: true
        };
      case 'gpus':
        return {
          id: 'drift-gpus',
          severity: 'warning',
          title: trans.__('Different GPUs: %1 → %2', was, now),
          evidence: trans.__(
            'The notebook recorded %1 on %2. Speed, memory and floating-point results can differ between GPU models.',
            was,
            date
          ),
          fix: '',
          restart: false
        };
      case 'driver':
        return {
          id: 'drift-driver',
          severity: 'info',
          title: trans.__('NVIDIA driver %1 → %2', was, now),
          evidence: trans.__(
            'The notebook recorded driver %1 on %2.',
            was,
            date
          ),
          fix: '',
          restart: false
        };
    }
  });
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The driver, its CUDA version and the names of the GPUs the kernel can
   * see; null when the GPUs cannot be read.
   */
  export function gpus(
    probe: IKernelProbe,
    snapshot: IGpuSnapshot | null
  ): IEnvironmentFingerprint['gpus'] {
    if (!snapshot || snapshot.error || snapshot.gpus.length === 0) {
      return null;
    }
    const visible = visibleGpuIndices(probe.cuda_visible_devices, snapshot);
    return {
      driver_version: snapshot.driver_version,
      cuda_version: snapshot.cuda_version,
      names: snapshot.gpus
        .filter(gpu => visible.includes(gpu.index))
        .map(gpu => gpu.name ?? '')
    };
  }

  /**
   * The command that installs a recorded version again, or removes a package
   * that was not installed, with the installer that installed it, in the
   * environment at `prefix`. PyTorch's builds with a local version (`+cpu`,
   * `+cu121`) come from PyTorch's own index.
   */
  export function pinCommand(
    name: string,
    version: string | null,
    conda: boolean,
    prefix: string,
    uv: boolean
  ): string {
    // uv's venvs have no pip: `uv pip` aimed at the environment's Python.
    const install = uv
      ? `uv pip install --python "${python(prefix)}"`
      : `"${python(prefix)}" -m pip install`;
    const uninstall = uv
      ? `uv pip uninstall --python "${python(prefix)}"`
      : `"${python(prefix)}" -m pip uninstall -y`;
    const condaIn = `-p "${prefix}"`;
    if (version === null) {
      return conda ? `conda remove ${condaIn} ${name}` : `${uninstall} ${name}`;
    }
    const local = version.split('+')[1];
    if (local) {
      return `${install} "${name}==${version}" --index-url https://download.pytorch.org/whl/${local}`;
    }
    return conda
      ? `conda install ${condaIn} "${name}=${version}"`
      : `${install} "${name}==${version}"`;
  }

  /**
   * The Python of the environment at `prefix`, as the server names it
   * (`cuda_compat.interpreter`): `<prefix>\\python.exe` on Windows.
   */
  function python(prefix: string): string {
    return /^[A-Za-z]:[\\/]/.test(prefix)
      ? `${prefix.replace(/[\\/]+$/, '')}\\python.exe`
      : `${prefix.replace(/\/+$/, '')}/bin/python`;
  }
}
