import { TranslationBundle } from '@jupyterlab/translation';
import {
  caretDownIcon,
  caretRightIcon,
  downloadIcon,
  HTMLSelect
} from '@jupyterlab/ui-components';
import * as React from 'react';

import { EXPORT_FILES, filterEnvironments } from '../env/catalog';
import { IEnvironmentCatalog } from '../tokens';
import { EnvironmentFileStyle, IEnvironment } from '../restapi/envs';
import { SETTINGS_DEFAULTS } from '../settingsDefaults';

/**
 * The export styles, in the order offered: environment.yml's three, then
 * requirements.txt and pylock.toml.
 */
const STYLES: readonly EnvironmentFileStyle[] = [
  'no-builds',
  'from-history',
  'with-builds',
  'requirements',
  'pylock'
];

/**
 * The properties of {@link EnvironmentTable}.
 */
export namespace EnvironmentTable {
  /**
   * The properties of {@link EnvironmentTable}.
   */
  export interface IProps {
    /**
     * The server's environments.
     */
    catalog: IEnvironmentCatalog;
    /**
     * The folder of the kernel's environment, to mark it.
     */
    kernelPrefix: string | null;
    /**
     * Called when the user opens an environment's package list.
     */
    onExpand: (environment: IEnvironment) => void;
    /**
     * Called when the user asks for an environment.yml, requirements.txt or
     * pylock.toml.
     */
    onExport: (environment: IEnvironment, style: EnvironmentFileStyle) => void;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The conda environments and kernelspec venvs of the server: searchable,
 * each with its packages on expand and a file to download: environment.yml,
 * requirements.txt or pylock.toml.
 */
export function EnvironmentTable(
  props: EnvironmentTable.IProps
): React.ReactElement {
  const { catalog, kernelPrefix, trans } = props;
  const [query, setQuery] = React.useState('');
  const [style, setStyle] = React.useState<EnvironmentFileStyle>(
    SETTINGS_DEFAULTS.reproducibility.exportStyle
  );
  const [expanded, setExpanded] = React.useState<ReadonlySet<string>>(
    new Set()
  );
  const environments = catalog.environments;
  if (environments === null) {
    return (
      <p className="jp-GpuMonitor-empty">
        {catalog.failure
          ? trans.__(
              'The server cannot list its environments: %1',
              catalog.failure.message
            )
          : trans.__('Reading the environments…')}
      </p>
    );
  }
  const shown = filterEnvironments(environments, query);
  const toggle = (environment: IEnvironment) => {
    const next = new Set(expanded);
    if (next.delete(environment.id)) {
      setExpanded(next);
      return;
    }
    next.add(environment.id);
    setExpanded(next);
    props.onExpand(environment);
  };
  return (
    <>
      <div className="jp-GpuMonitor-tableTools">
        <input
          type="search"
          className="jp-GpuMonitor-search"
          aria-label={trans.__('Search environments')}
          placeholder={trans.__('Search environments')}
          value={query}
          onChange={event => setQuery(event.currentTarget.value)}
        />
        <label className="jp-GpuMonitor-window">
          {trans.__('Export as')}
          <HTMLSelect
            aria-label={trans.__('Export style')}
            value={style}
            onChange={event =>
              setStyle(event.currentTarget.value as EnvironmentFileStyle)
            }
            options={STYLES.map(value => ({
              value,
              label: Private.styleLabel(value, trans)
            }))}
          />
        </label>
      </div>
      <table
        className="jp-GpuMonitor-environments"
        aria-label={trans.__('Environments')}
      >
        <colgroup>
          <col />
          <col className="jp-GpuMonitor-pythonColumn" />
          <col className="jp-GpuMonitor-countColumn" />
          <col className="jp-GpuMonitor-buttonColumn" />
        </colgroup>
        <thead>
          <tr>
            <th scope="col">{trans.__('Name')}</th>
            <th scope="col">{trans.__('Python')}</th>
            <th scope="col">{trans.__('Packages')}</th>
            <th scope="col">
              <span className="jp-GpuMonitor-hidden">{trans.__('Export')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {shown.length === 0 && (
            <tr>
              <td colSpan={4} className="jp-GpuMonitor-empty">
                {trans.__('No environment matches.')}
              </td>
            </tr>
          )}
          {shown.map(environment => {
            const open = expanded.has(environment.id);
            const current = environment.prefix === kernelPrefix;
            return (
              <React.Fragment key={environment.id}>
                <tr className={current ? 'jp-mod-current' : undefined}>
                  <td title={environment.prefix}>
                    <button
                      type="button"
                      className="jp-GpuMonitor-expand"
                      aria-expanded={open}
                      onClick={() => toggle(environment)}
                    >
                      {open ? (
                        <caretDownIcon.react tag="span" />
                      ) : (
                        <caretRightIcon.react tag="span" />
                      )}
                      {environment.name}
                    </button>
                    <span className="jp-GpuMonitor-dim">
                      {' '}
                      {environment.kind}
                      {current ? ` · ${trans.__('this kernel')}` : ''}
                    </span>
                  </td>
                  <td>{environment.python_version ?? ''}</td>
                  <td>{environment.package_count}</td>
                  <td>
                    <button
                      type="button"
                      className="jp-GpuMonitor-iconButton"
                      aria-label={trans.__(
                        'Download %1 of %2',
                        EXPORT_FILES[style].name,
                        environment.name
                      )}
                      title={trans.__(
                        'Download %1 of %2 (%3)',
                        EXPORT_FILES[style].name,
                        environment.name,
                        Private.styleLabel(style, trans)
                      )}
                      onClick={() => props.onExport(environment, style)}
                    >
                      <downloadIcon.react tag="span" />
                    </button>
                  </td>
                </tr>
                {open && (
                  <tr>
                    <td colSpan={4}>
                      <PackageList
                        environment={environment}
                        catalog={catalog}
                        trans={trans}
                      />
                    </td>
                  </tr>
                )}
              </React.Fragment>
            );
          })}
        </tbody>
      </table>
      {catalog.unreadable.length > 0 && (
        <ul
          className="jp-GpuMonitor-unreadable"
          aria-label={trans.__('Folders that could not be read')}
        >
          {catalog.unreadable.map(folder => (
            <li key={folder.prefix} title={folder.origin}>
              {trans.__(
                '%1 could not be read: %2',
                folder.prefix,
                folder.message
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/**
 * The packages of one environment, once loaded.
 */
function PackageList(props: {
  environment: IEnvironment;
  catalog: IEnvironmentCatalog;
  trans: TranslationBundle;
}): React.ReactElement {
  const { environment, catalog, trans } = props;
  const loaded = catalog.packagesOf(environment.id);
  if (catalog.isGone(environment.id)) {
    return (
      <p className="jp-GpuMonitor-empty" role="status">
        {trans.__(
          '%1 was deleted since the list was read: it is read again.',
          environment.name
        )}
      </p>
    );
  }
  if (!loaded) {
    return (
      <p className="jp-GpuMonitor-empty">{trans.__('Reading the packages…')}</p>
    );
  }
  return (
    <table
      className="jp-GpuMonitor-packages"
      aria-label={trans.__('Packages of %1', environment.name)}
    >
      <thead>
        <tr>
          <th scope="col">{trans.__('Package')}</th>
          <th scope="col">{trans.__('Version')}</th>
          <th scope="col">{trans.__('From')}</th>
        </tr>
      </thead>
      <tbody>
        {loaded.packages.map(record => (
          <tr key={`${record.installer}:${record.name}`}>
            <td title={record.name}>{record.name}</td>
            <td title={record.build || record.version}>{record.version}</td>
            <td title={record.channel}>
              {record.installer === 'pip' ? trans.__('pip') : record.channel}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * An export style, for a person.
   */
  export function styleLabel(
    style: EnvironmentFileStyle,
    trans: TranslationBundle
  ): string {
    const labels: { [K in EnvironmentFileStyle]: string } = {
      'no-builds': trans.__('versions'),
      'from-history': trans.__('as asked for'),
      'with-builds': trans.__('with builds'),
      requirements: trans.__('requirements.txt (pip)'),
      pylock: trans.__('pylock.toml (PEP 751)')
    };
    return labels[style];
  }
}
