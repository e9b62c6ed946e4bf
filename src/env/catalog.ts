import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import {
  fetchEnvironmentFile,
  fetchEnvironmentPackages,
  fetchEnvironments
} from '../api';
import { classifyFailure } from '../gpu/failure';
import { IEnvironmentCatalog, IRequestFailure } from '../tokens';
import {
  EnvironmentFileStyle,
  IEnvironment,
  IEnvironmentPackages,
  IPackageRecord,
  IUnreadableEnvironment
} from '../restapi/envs';

/**
 * The file name and media type of each export style: environment.yml for
 * conda's three, requirements.txt and pylock.toml for what pip or uv installed.
 */
export const EXPORT_FILES: Readonly<
  Record<EnvironmentFileStyle, { name: string; mediaType: string }>
> = {
  'no-builds': { name: 'environment.yml', mediaType: 'application/yaml' },
  'from-history': { name: 'environment.yml', mediaType: 'application/yaml' },
  'with-builds': { name: 'environment.yml', mediaType: 'application/yaml' },
  requirements: { name: 'requirements.txt', mediaType: 'text/plain' },
  pylock: { name: 'pylock.toml', mediaType: 'application/toml' }
};

/**
 * The environments whose name, id, folder, kind, manager, Python version or
 * kernelspecs contain every word of the query, ignoring case.
 */
export function filterEnvironments(
  environments: readonly IEnvironment[],
  query: string
): IEnvironment[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return environments.filter(environment => {
    const text = [
      environment.name,
      environment.id,
      environment.prefix,
      environment.kind,
      environment.manager,
      environment.python_version ?? '',
      ...environment.kernelspecs
    ]
      .join(' ')
      .toLowerCase();
    return words.every(word => text.includes(word));
  });
}

/**
 * The environment of a listing whose folder is `prefix`; null when none is.
 */
export function environmentOfPrefix(
  environments: readonly IEnvironment[],
  prefix: string | null
): IEnvironment | null {
  const normal = (path: string) => path.replace(/[/\\]+$/, '');
  return prefix === null
    ? null
    : (environments.find(
        environment => normal(environment.prefix) === normal(prefix)
      ) ?? null);
}

/**
 * The versions of some packages in an environment's records, by the names
 * pip knows them by: conda's `pytorch` answers for `torch`. Null for a
 * package that is not installed.
 */
export function packageVersions(
  records: readonly IPackageRecord[],
  names: readonly string[]
): { [name: string]: string | null } {
  const versions: { [name: string]: string | null } = {};
  for (const name of names) {
    const aliases = [name, ...(Private.CONDA_NAMES[name] ?? [])].map(alias =>
      Private.normalName(alias)
    );
    // pip's files win over conda's when both installed one (pip came last).
    const found =
      records.find(
        record =>
          record.installer === 'pip' &&
          aliases.includes(Private.normalName(record.name))
      ) ??
      records.find(record => aliases.includes(Private.normalName(record.name)));
    versions[name] = found?.version ?? null;
  }
  return versions;
}

/**
 * The server's environments, asked for once and then kept; each
 * environment's packages asked for when first wanted.
 */
export class EnvironmentCatalog implements IEnvironmentCatalog {
  /**
   * Create a catalog; it asks the server nothing before `load`.
   */
  constructor(options: EnvironmentCatalog.IOptions) {
    this._serverSettings = options.serverSettings;
  }

  /**
   * The environments; null before they are loaded.
   */
  get environments(): readonly IEnvironment[] | null {
    return this._environments;
  }

  /**
   * The folders the server could not read as environments, each with why.
   */
  get unreadable(): readonly IUnreadableEnvironment[] {
    return this._unreadable;
  }

  /**
   * Why loading failed; null otherwise.
   */
  get failure(): IRequestFailure | null {
    return this._failure;
  }

  /**
   * Emitted when the environments or a package list arrive.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Load the environments, once; again when `reload`. Never rejects: a
   * failure is kept in `failure`.
   */
  load(reload = false): Promise<void> {
    if (this._loading === null || reload) {
      this._loading = this._load();
    }
    return this._loading;
  }

  /**
   * The packages of an environment, once loaded; undefined before.
   */
  packagesOf(id: string): IEnvironmentPackages | undefined {
    return this._packages.get(id);
  }

  /**
   * Load the packages of an environment, once. An environment the server
   * no longer has (deleted since it was listed) rejects, is marked gone, and
   * the listing is read again.
   */
  async loadPackages(id: string): Promise<IEnvironmentPackages> {
    const known = this._packages.get(id);
    if (known) {
      return known;
    }
    let loaded: IEnvironmentPackages;
    try {
      loaded = await fetchEnvironmentPackages(this._serverSettings, id);
    } catch (error) {
      this._noteGone(id, error);
      throw error;
    }
    this._packages.set(id, loaded);
    this._changed.emit();
    return loaded;
  }

  /**
   * Whether the environment was deleted since it was listed.
   */
  isGone(id: string): boolean {
    return this._gone.has(id);
  }

  /**
   * An environment's environment.yml, requirements.txt or pylock.toml.
   */
  async exportFile(id: string, style: EnvironmentFileStyle): Promise<string> {
    try {
      return await fetchEnvironmentFile(this._serverSettings, id, style);
    } catch (error) {
      this._noteGone(id, error);
      throw error;
    }
  }

  /**
   * Mark an environment the server answered 404 for as gone, and read the
   * listing again, once: a listing that still names it must not start a
   * loop.
   */
  private _noteGone(id: string, error: unknown): void {
    if (
      error instanceof ServerConnection.ResponseError &&
      error.response.status === 404 &&
      !this._gone.has(id)
    ) {
      this._gone.add(id);
      this._changed.emit();
      void this.load(true);
    }
  }

  /**
   * Ask the server for the environments; a reload reads again the packages
   * read before, of the environments still listed (their rows may be open).
   */
  private async _load(): Promise<void> {
    const read = [...this._packages.keys()];
    try {
      const listing = await fetchEnvironments(this._serverSettings);
      this._environments = listing.environments;
      this._unreadable = listing.unreadable;
      this._failure = null;
      this._packages.clear();
    } catch (error) {
      this._failure = classifyFailure(error);
    }
    this._changed.emit();
    const listed = new Set(this._environments?.map(({ id }) => id));
    await Promise.all(
      read
        .filter(id => listed.has(id) && !this._packages.has(id))
        .map(id =>
          this.loadPackages(id).catch(() => {
            // The row says it is reading; opening it again asks again.
          })
        )
    );
  }

  private _serverSettings: ServerConnection.ISettings;
  private _environments: readonly IEnvironment[] | null = null;
  private _unreadable: readonly IUnreadableEnvironment[] = [];
  private _failure: IRequestFailure | null = null;
  private _loading: Promise<void> | null = null;
  private _packages = new Map<string, IEnvironmentPackages>();
  private _gone = new Set<string>();
  private _changed = new Signal<this, void>(this);
}

/**
 * The types of {@link EnvironmentCatalog}.
 */
export namespace EnvironmentCatalog {
  /**
   * How to reach the server.
   */
  export interface IOptions {
    /**
     * The connection settings of the Jupyter server.
     */
    serverSettings: ServerConnection.ISettings;
  }
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The conda names of packages pip knows by another name.
   */
  export const CONDA_NAMES: { [pipName: string]: string[] } = {
    torch: ['pytorch']
  };

  /**
   * A distribution name as PEP 503 compares them.
   */
  export function normalName(name: string): string {
    return name.toLowerCase().replace(/[-_.]+/g, '-');
  }
}
