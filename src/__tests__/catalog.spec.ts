/**
 * @jest-environment node
 */
import {
  EnvironmentCatalog,
  environmentOfPrefix,
  filterEnvironments,
  packageVersions
} from '../env/catalog';
import { IPackageRecord } from '../restapi/envs';
import { environmentList, torchCpuPackages } from './envPayloads';
import { endpoint, fakeServer, jsonResponse, requestedUrl } from './server';

describe('filterEnvironments', () => {
  const environments = environmentList().environments;
  const ids = (query: string) =>
    filterEnvironments(environments, query).map(environment => environment.id);

  it('keeps every environment for an empty query', () => {
    expect(ids('  ')).toEqual(['plain', 'torch-cpu', 'main']);
  });

  it('matches names, folders, kernelspecs and Python versions, ignoring case', () => {
    expect(ids('TORCH')).toEqual(['torch-cpu']);
    expect(ids('.venv')).toEqual(['main']);
    expect(ids('python3')).toEqual(['main']);
    expect(ids('3.11')).toEqual(['plain', 'torch-cpu', 'main']);
  });

  it('wants every word', () => {
    expect(ids('venv plain')).toEqual(['plain']);
    expect(ids('conda')).toEqual([]);
  });
});

describe('environmentOfPrefix', () => {
  const environments = environmentList().environments;
  const torch = environments[1];

  it('finds the environment of a folder, with or without a final slash', () => {
    expect(environmentOfPrefix(environments, torch.prefix)).toBe(torch);
    expect(environmentOfPrefix(environments, `${torch.prefix}/`)).toBe(torch);
    expect(environmentOfPrefix(environments, '/usr')).toBeNull();
    expect(environmentOfPrefix(environments, null)).toBeNull();
  });
});

describe('packageVersions', () => {
  it('reads versions from the records; null when not installed', () => {
    expect(
      packageVersions(torchCpuPackages().packages, ['torch', 'numpy', 'jax'])
    ).toEqual({ torch: '2.13.0+cpu', numpy: '2.4.6', jax: null });
  });

  it("takes conda's pytorch for torch, and pip's files over conda's", () => {
    const record = (
      name: string,
      version: string,
      installer: 'conda' | 'pip'
    ): IPackageRecord => ({
      name,
      version,
      build: '',
      channel: installer === 'pip' ? 'pypi' : 'conda-forge',
      installer,
      conda_name: null
    });
    expect(
      packageVersions(
        [
          record('pytorch', '2.5.1', 'conda'),
          record('numpy', '1.26.4', 'conda'),
          record('numpy', '2.0.2', 'pip')
        ],
        ['torch', 'numpy']
      )
    ).toEqual({ torch: '2.5.1', numpy: '2.0.2' });
  });
});

describe('EnvironmentCatalog', () => {
  it('asks for the environments once, and again only when reloaded', async () => {
    const server = fakeServer(() => environmentList());
    const catalog = new EnvironmentCatalog({ serverSettings: server.settings });
    expect(catalog.environments).toBeNull();

    await Promise.all([catalog.load(), catalog.load()]);
    expect(catalog.environments?.map(e => e.id)).toEqual([
      'plain',
      'torch-cpu',
      'main'
    ]);
    await catalog.load(true);
    expect(server.requests.map(endpoint)).toEqual(['envs', 'envs']);
  });

  it('keeps why the environments cannot be listed', async () => {
    const server = fakeServer(() =>
      jsonResponse({ message: 'Not Found' }, 404)
    );
    const catalog = new EnvironmentCatalog({ serverSettings: server.settings });
    const changed = jest.fn();
    catalog.changed.connect(changed);
    await catalog.load();
    expect(catalog.failure?.kind).toBe('not_enabled');
    expect(changed).toHaveBeenCalledTimes(1);
  });

  it("asks for an environment's packages once", async () => {
    const server = fakeServer(() => torchCpuPackages());
    const catalog = new EnvironmentCatalog({ serverSettings: server.settings });
    expect(catalog.packagesOf('torch-cpu')).toBeUndefined();
    await catalog.loadPackages('torch-cpu');
    await catalog.loadPackages('torch-cpu');
    expect(catalog.packagesOf('torch-cpu')?.packages).toHaveLength(40);
    expect(server.requests.map(endpoint)).toEqual(['envs/torch-cpu']);
  });

  it('reads again, on a reload, the packages it had read: their rows may be open', async () => {
    const server = fakeServer(request =>
      endpoint(request) === 'envs' ? environmentList() : torchCpuPackages()
    );
    const catalog = new EnvironmentCatalog({ serverSettings: server.settings });
    await catalog.load();
    await catalog.loadPackages('torch-cpu');

    await catalog.load(true);

    expect(catalog.packagesOf('torch-cpu')?.packages).toHaveLength(40);
    expect(server.requests.map(endpoint)).toEqual([
      'envs',
      'envs/torch-cpu',
      'envs',
      'envs/torch-cpu'
    ]);
  });

  it('marks an environment deleted since it was listed as gone, and lists again without it', async () => {
    let deleted = false;
    const listed = environmentList();
    const server = fakeServer(request => {
      if (endpoint(request) === 'envs') {
        return deleted
          ? {
              ...listed,
              environments: listed.environments.filter(
                ({ id }) => id !== 'torch-cpu'
              )
            }
          : listed;
      }
      return jsonResponse(
        { message: "no environment is named 'torch-cpu'" },
        404
      );
    });
    const catalog = new EnvironmentCatalog({ serverSettings: server.settings });
    await catalog.load();
    deleted = true;
    const changed = jest.fn();
    catalog.changed.connect(changed);

    await expect(catalog.loadPackages('torch-cpu')).rejects.toThrow();

    expect(catalog.isGone('torch-cpu')).toBe(true);
    await catalog.load();
    expect(catalog.environments!.map(({ id }) => id)).not.toContain(
      'torch-cpu'
    );
    expect(server.requests.map(endpoint)).toEqual([
      'envs',
      'envs/torch-cpu',
      'envs'
    ]);
    // Asked again (a listing that still names it): no second reload.
    await expect(catalog.loadPackages('torch-cpu')).rejects.toThrow();
    expect(server.requests.map(endpoint)).toHaveLength(4);
    // An export of a deleted environment tells the same.
    await expect(catalog.exportFile('plain', 'no-builds')).rejects.toThrow();
    expect(catalog.isGone('plain')).toBe(true);
  });

  it('exports environment.yml in the style asked for', async () => {
    const yaml = 'name: torch-cpu\nchannels:\n  - defaults\n';
    const server = fakeServer(
      () =>
        new Response(yaml, { headers: { 'Content-Type': 'application/yaml' } })
    );
    const catalog = new EnvironmentCatalog({ serverSettings: server.settings });
    expect(await catalog.exportFile('torch-cpu', 'with-builds')).toBe(yaml);
    const url = requestedUrl(server.requests[0]);
    expect(endpoint(server.requests[0])).toBe('envs/torch-cpu/export');
    expect(url.searchParams.get('style')).toBe('with-builds');
  });
});
