import { Time } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { noKernelReason } from '../env/glance';
import { formatList } from '../format/units';
import { CommandIDs, IEnvironmentInspector } from '../tokens';
import { CommandButton } from './CommandButton';

/**
 * The properties of {@link FingerprintSection}.
 */
export namespace FingerprintSection {
  /**
   * The properties of {@link FingerprintSection}.
   */
  export interface IProps {
    /**
     * The inspector, with the notebook's fingerprint and the drift.
     */
    inspector: IEnvironmentInspector;
    /**
     * The application's commands: record, export, insert the seed cell.
     */
    commands: CommandRegistry;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The environment the notebook recorded, whether the kernel still matches
 * it, and the reproducibility actions.
 */
export function FingerprintSection(
  props: FingerprintSection.IProps
): React.ReactElement {
  const { inspector, commands, trans } = props;
  const fingerprint = inspector.fingerprint;
  const installed = fingerprint
    ? Object.entries(fingerprint.packages).filter(([, version]) => version)
    : [];
  return (
    <section
      className="jp-GpuMonitor-section"
      aria-label={trans.__('Fingerprint')}
    >
      <h3 className="jp-GpuMonitor-sectionTitle">{trans.__('Fingerprint')}</h3>
      {fingerprint === null ? (
        <p className="jp-GpuMonitor-empty">
          {trans.__(
            'This notebook has no record of the environment it ran in.'
          )}
        </p>
      ) : (
        <>
          <dl className="jp-GpuMonitor-facts jp-GpuMonitor-envFacts">
            <dt>{trans.__('Recorded')}</dt>
            <dd>{Time.format(fingerprint.recorded)}</dd>
            <dt>{trans.__('Environment')}</dt>
            <dd
              className="jp-GpuMonitor-path"
              title={fingerprint.environment.prefix}
            >
              {fingerprint.environment.name ?? fingerprint.environment.prefix}
            </dd>
            <dt>{trans.__('Python')}</dt>
            <dd>{fingerprint.python.version}</dd>
            <dt>{trans.__('Packages')}</dt>
            <dd>
              {installed.length === 0
                ? trans.__('none of the key packages')
                : formatList(
                    installed.map(([name, version]) => `${name} ${version}`),
                    trans
                  )}
            </dd>
            {fingerprint.torch_cuda && (
              <>
                <dt>{trans.__('PyTorch build')}</dt>
                <dd>
                  {fingerprint.torch_cuda === 'cpu'
                    ? trans.__('CPU only')
                    : trans.__('CUDA %1', fingerprint.torch_cuda)}
                </dd>
              </>
            )}
            {fingerprint.gpus && (
              <>
                <dt>{trans.__('GPUs')}</dt>
                <dd>
                  {trans.__(
                    '%1; driver %2, CUDA %3',
                    formatList(fingerprint.gpus.names, trans) ||
                      trans.__('none'),
                    fingerprint.gpus.driver_version ?? '?',
                    fingerprint.gpus.cuda_version ?? '?'
                  )}
                </dd>
              </>
            )}
          </dl>
          {inspector.phase === 'probed' && (
            <p className="jp-GpuMonitor-note" role="status">
              {inspector.drift.length === 0
                ? trans.__('The kernel matches the fingerprint.')
                : trans.__(
                    'The kernel differs from the fingerprint: see the findings.'
                  )}
            </p>
          )}
        </>
      )}
      <div className="jp-GpuMonitor-actions">
        <CommandButton commands={commands} id={CommandIDs.recordEnvironment} />
        <CommandButton
          commands={commands}
          id={CommandIDs.exportEnvironmentFile}
          disabledReason={noKernelReason(inspector, trans)}
        />
        <CommandButton
          commands={commands}
          id={CommandIDs.insertReproducibilityCell}
        />
      </div>
    </section>
  );
}
