/**
 * Environments: GET envs, GET envs/<name or id>; environment.yml exports are YAML, not JSON.
 *
 * Generated from api_schema/envs.json by `jlpm build:schemas`; do not edit.
 */

/**
 * The kind of an environment.
 */
export type EnvironmentKind = 'conda-root' | 'conda-env' | 'venv';

/**
 * A conda environment (conda, mamba, micromamba, pixi), or a venv a kernelspec launches.
 */
export interface IEnvironment {
  /**
   * Its name in URLs: the name when no other environment has it, else the name and a short hash of the prefix; never a path.
   */
  id: string;
  /**
   * Its name.
   */
  name: string;
  /**
   * Its folder; a byte of a name that is not UTF-8 shows as U+FFFD.
   */
  prefix: string;
  /**
   * Its kind.
   */
  kind: EnvironmentKind;
  /**
   * The tool that made it: conda, mamba, micromamba, pixi, venv, virtualenv, uv.
   */
  manager: string;
  /**
   * The version of its Python.
   */
  python_version: string | null;
  /**
   * How many packages it holds (conda's records; a venv's `*.dist-info`).
   */
  package_count: number;
  /**
   * The kernelspecs that launch it.
   */
  kernelspecs: string[];
  /**
   * When conda last changed it (`conda-meta/history`), in seconds since the epoch; null for a venv.
   */
  modified: number | null;
}

/**
 * An environment as `conda env list --json` details it, keyed by its prefix: conda's `name` and `base`, and our other fields.
 */
export interface ICondaEnvironmentDetails {
  id: string;
  name: string;
  kind: EnvironmentKind;
  manager: string;
  python_version: string | null;
  package_count: number;
  kernelspecs: string[];
  modified: number | null;
  /**
   * Whether it is a conda installation's root.
   */
  base: boolean;
}

/**
 * A folder that may be an environment but cannot be listed: its files did not answer in time (a network filesystem that hangs, a FIFO where conda keeps a file; it is read again once they answer), or its path is not UTF-8 (renaming it is the way).
 */
export interface IUnreadableEnvironment {
  /**
   * Its folder; a byte of a name that is not UTF-8 shows as U+FFFD.
   */
  prefix: string;
  /**
   * Where it was found: an envs folder, environments.txt, a kernelspec.
   */
  origin: string;
  /**
   * Why it is not listed, and what happens next.
   */
  message: string;
}

/**
 * The answer of `GET envs[?use_conda=1]`: every environment found, and the folders that could not be read (files that did not answer in time, a path that is not UTF-8); also in the shape of `conda env list --json` (`envs`, `envs_details`), so that scripts written for conda's output read it.
 */
export interface IEnvironmentList {
  /**
   * Every environment found.
   */
  environments: IEnvironment[];
  /**
   * The folders that could not be read, with why (files that did not answer within the listing's bound, a path that is not UTF-8): not in `environments` (nor in `envs`).
   */
  unreadable: IUnreadableEnvironment[];
  /**
   * Their prefixes, as `conda env list --json` lists them.
   */
  envs: string[];
  /**
   * Each environment by its prefix, as `conda env list --json` details them.
   */
  envs_details: {
    [k: string]: ICondaEnvironmentDetails;
  };
}

/**
 * One installed package of an environment.
 */
export interface IPackageRecord {
  /**
   * The package name.
   */
  name: string;
  /**
   * Its version.
   */
  version: string;
  /**
   * Its conda build string; empty for a pip package.
   */
  build: string;
  /**
   * Its channel; `pypi` for a pip package.
   */
  channel: string;
  /**
   * Who installed it: conda, or a PyPI installer (pip, uv) without a conda record.
   */
  installer: 'conda' | 'pip';
  /**
   * On a pip package: the conda package that installed the same distribution (the two fight over the same files).
   */
  conda_name: string | null;
}

/**
 * A conda package and a pip package that install the same Python distribution in one environment.
 */
export interface ICondaAndPip {
  conda: IPackageRecord;
  pip: IPackageRecord;
}

/**
 * The answer of `GET envs/<name or id>[?use_conda=1]`.
 */
export interface IEnvironmentPackages {
  /**
   * The environment.
   */
  environment: IEnvironment;
  /**
   * Its packages, by name.
   */
  packages: IPackageRecord[];
  /**
   * The pairs of conda and pip packages that install the same distribution.
   */
  conda_and_pip: ICondaAndPip[];
}

/**
 * The files `GET envs/<name or id>/export?style=` writes: environment.yml with every package's version (`no-builds`), the specs asked for (`from-history`) or every build (`with-builds`); requirements.txt (`requirements`) or pylock.toml (`pylock`) of what pip or uv installed.
 */
export type EnvironmentFileStyle =
  'no-builds' | 'from-history' | 'with-builds' | 'requirements' | 'pylock';
