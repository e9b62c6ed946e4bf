import { TranslationBundle } from '@jupyterlab/translation';
import { copyIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { FindingSeverity } from '../restapi/inspector';
import { InspectorFinding } from '../tokens';

/**
 * The properties of {@link FindingList}.
 */
export namespace FindingList {
  /**
   * The properties of {@link FindingList}.
   */
  export interface IProps {
    /**
     * The findings, in the order shown (errors first).
     */
    findings: readonly InspectorFinding[];
    /**
     * Called with a fix the user copies.
     */
    onCopy: (fix: string) => void;
    /**
     * The application's commands: the restart a fix needs; no button
     * without them.
     */
    commands?: CommandRegistry;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * JupyterLab's (and Notebook 7's) command that restarts the current
 * kernel, after asking.
 */
const RESTART_KERNEL = 'kernelmenu:restart';

/**
 * What is wrong with the kernel's environment: each finding with its
 * evidence and the command that fixes it, ready to copy, and, where the fix
 * changes what the running kernel loaded, that it takes a restart, with the
 * button that restarts it.
 */
export function FindingList(props: FindingList.IProps): React.ReactElement {
  const { findings, trans } = props;
  const [copied, setCopied] = React.useState<string | null>(null);
  if (findings.length === 0) {
    return (
      <p className="jp-GpuMonitor-empty">{trans.__('No problem found.')}</p>
    );
  }
  return (
    <ul className="jp-GpuMonitor-findings" aria-label={trans.__('Findings')}>
      {findings.map(finding => (
        <li
          key={finding.id}
          className={`jp-GpuMonitor-finding jp-mod-${finding.severity}`}
        >
          <p className="jp-GpuMonitor-findingTitle">
            <span className="jp-GpuMonitor-severity">
              {Private.severityLabel(finding.severity, trans)}
            </span>{' '}
            {finding.title}
          </p>
          <p className="jp-GpuMonitor-findingEvidence">{finding.evidence}</p>
          {finding.fix && (
            <div className="jp-GpuMonitor-fix">
              <code>{Private.commandWords(finding.fix)}</code>
              <button
                type="button"
                className="jp-GpuMonitor-iconButton"
                aria-label={trans.__('Copy the fix of: %1', finding.title)}
                title={
                  copied === finding.id
                    ? trans.__('Copied')
                    : trans.__('Copy the fix')
                }
                onClick={() => {
                  props.onCopy(finding.fix);
                  setCopied(finding.id);
                }}
              >
                <copyIcon.react tag="span" />
              </button>
            </div>
          )}
          {finding.fix && finding.restart && (
            <p className="jp-GpuMonitor-restartNote">
              {trans.__(
                'Then restart the kernel: it keeps what it loaded until it restarts.'
              )}{' '}
              {props.commands?.hasCommand(RESTART_KERNEL) && (
                <button
                  type="button"
                  className="jp-GpuMonitor-button"
                  onClick={() => {
                    void props.commands!.execute(RESTART_KERNEL);
                  }}
                >
                  {trans.__('Restart Kernel')}
                </button>
              )}
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * The longest word kept to one line: options ("--force-reinstall") and
   * versions do not break inside; a longer one (a URL, a path) may, rather
   * than run past the panel.
   */
  const UNBROKEN_WORD = 24;

  /**
   * A fix's words, each short one kept whole: a browser breaks a line after
   * any hyphen, which would split "--force-/reinstall".
   */
  export function commandWords(fix: string): React.ReactNode[] {
    return fix.split(/( +)/).map((word, index) =>
      word.length <= UNBROKEN_WORD && word.trim() !== '' ? (
        <span key={index} className="jp-GpuMonitor-word">
          {word}
        </span>
      ) : (
        word
      )
    );
  }

  /**
   * A severity, for a person.
   */
  export function severityLabel(
    severity: FindingSeverity,
    trans: TranslationBundle
  ): string {
    const labels: { [K in FindingSeverity]: string } = {
      error: trans.__('Error'),
      warning: trans.__('Warning'),
      info: trans.__('Note')
    };
    return labels[severity];
  }
}
