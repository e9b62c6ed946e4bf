import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { noKernelReason } from '../env/glance';
import { CommandIDs, IEnvironmentInspector } from '../tokens';
import { EnvironmentFileStyle, IEnvironment } from '../restapi/envs';
import { IGpuSnapshot } from '../restapi/gpus';
import { CommandButton } from './CommandButton';
import { EnvironmentTable } from './EnvironmentTable';
import { FindingList } from './FindingList';
import { FingerprintSection } from './FingerprintSection';
import { KernelEnvironment } from './KernelEnvironment';

/**
 * The properties of {@link EnvironmentView}.
 */
export namespace EnvironmentView {
  /**
   * The properties of {@link EnvironmentView}.
   */
  export interface IProps {
    /**
     * The inspector of the current kernel.
     */
    inspector: IEnvironmentInspector;
    /**
     * The GPUs now; null when unknown.
     */
    snapshot: IGpuSnapshot | null;
    /**
     * The application's commands, for the panel's actions.
     */
    commands: CommandRegistry;
    /**
     * Called with a fix the user copies.
     */
    onCopy: (fix: string) => void;
    /**
     * Called when the user opens an environment's package list.
     */
    onExpand: (environment: IEnvironment) => void;
    /**
     * Called when the user asks for an environment.yml.
     */
    onExport: (environment: IEnvironment, style: EnvironmentFileStyle) => void;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * The Environment panel's content: the kernel's environment at a glance, the
 * findings, the notebook's fingerprint and the server's environments.
 */
export function EnvironmentView(
  props: EnvironmentView.IProps
): React.ReactElement {
  const { inspector, commands, trans } = props;
  const target = inspector.target;
  return (
    <div className="jp-GpuMonitor-body">
      <div className="jp-GpuMonitor-header">
        <h2 className="jp-GpuMonitor-title">
          {target
            ? trans.__('Environment of %1', target.label)
            : trans.__('Environment')}
        </h2>
        <CommandButton
          commands={commands}
          id={CommandIDs.refreshEnvironment}
          disabledReason={noKernelReason(inspector, trans)}
        />
        <CommandButton
          commands={commands}
          id={CommandIDs.deepCheck}
          disabledReason={
            inspector.phase === 'no-probe'
              ? trans.__('(not a Python kernel)')
              : null
          }
        />
      </div>
      <KernelEnvironment
        inspector={inspector}
        snapshot={props.snapshot}
        trans={trans}
      />
      {inspector.report && (
        <section
          className="jp-GpuMonitor-section"
          aria-label={trans.__('Findings')}
        >
          <h3 className="jp-GpuMonitor-sectionTitle">{trans.__('Findings')}</h3>
          <FindingList
            findings={inspector.findings}
            onCopy={props.onCopy}
            commands={commands}
            trans={trans}
          />
        </section>
      )}
      {target?.notebook && (
        <FingerprintSection
          inspector={inspector}
          commands={commands}
          trans={trans}
        />
      )}
      <section
        className="jp-GpuMonitor-section"
        aria-label={trans.__('Environments')}
      >
        <h3 className="jp-GpuMonitor-sectionTitle">
          {trans.__('Environments')}
        </h3>
        <EnvironmentTable
          catalog={inspector.environments}
          kernelPrefix={inspector.environment?.prefix ?? null}
          onExpand={props.onExpand}
          onExport={props.onExport}
          trans={trans}
        />
      </section>
    </div>
  );
}
