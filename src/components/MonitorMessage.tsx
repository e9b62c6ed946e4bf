import { Clipboard } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { copyIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { hintParts, rootCommands } from '../format/hints';
import { IGpuSnapshot } from '../restapi/gpus';

/**
 * The properties of {@link MonitorMessage}.
 */
export namespace MonitorMessage {
  /**
   * The properties of {@link MonitorMessage}.
   */
  export interface IProps {
    /**
     * What happened (its message), and what to do about it (its hint, with
     * its commands between backticks): a read's error or a request's
     * failure.
     */
    problem: { message: string; hint: string };
    /**
     * When the monitor last tried and how often it tries again; none when
     * it does not.
     */
    retry?: string;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * Why the GPUs cannot be shown, and what to do about it: the hint's
 * commands as code with a copy button, and the ones that need root as what
 * to ask an administrator.
 */
export function MonitorMessage(
  props: MonitorMessage.IProps
): React.ReactElement {
  const { problem, trans } = props;
  const forAdmin = rootCommands(problem.hint);
  return (
    <div className="jp-GpuMonitor-message" role="alert">
      <p className="jp-GpuMonitor-errorMessage">{problem.message}</p>
      <HintText hint={problem.hint} trans={trans} />
      {forAdmin.length > 0 && (
        <p className="jp-GpuMonitor-adminHint">
          {trans.__('No sudo here? Ask your administrator to run:')}{' '}
          {forAdmin.map(command => (
            <Command key={command} command={command} trans={trans} />
          ))}
        </p>
      )}
      {props.retry && <p className="jp-GpuMonitor-retry">{props.retry}</p>}
    </div>
  );
}

/**
 * A hint, its commands as code that can be copied.
 */
export function HintText(props: {
  hint: string;
  trans: TranslationBundle;
}): React.ReactElement {
  return (
    <p className="jp-GpuMonitor-errorHint">
      {hintParts(props.hint).map((part, index) =>
        part.code ? (
          <Command key={index} command={part.text} trans={props.trans} />
        ) : (
          <React.Fragment key={index}>{part.text}</React.Fragment>
        )
      )}
    </p>
  );
}

/**
 * A command in a hint, with a button that copies it.
 */
function Command(props: {
  command: string;
  trans: TranslationBundle;
}): React.ReactElement {
  const { command, trans } = props;
  return (
    <span className="jp-GpuMonitor-command">
      <code>{command}</code>
      <button
        type="button"
        className="jp-GpuMonitor-copyButton"
        aria-label={trans.__('Copy %1', command)}
        title={trans.__('Copy %1', command)}
        onClick={() => Clipboard.copyToSystem(command)}
      >
        <copyIcon.react tag="span" />
      </button>
    </span>
  );
}

/**
 * The properties of {@link NoGpuMessage}.
 */
export namespace NoGpuMessage {
  /**
   * The properties of {@link NoGpuMessage}.
   */
  export interface IProps {
    /**
     * What the sources said: no NVML library, no nvidia-smi.
     */
    detail: string;
    /**
     * How to give the server a GPU's driver.
     */
    hint: string;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * A server without an NVIDIA driver (a laptop, a CPU server: the most
 * common first run) as the information it is, not as an error: what the
 * sources said and how to add a GPU folded away.
 */
export function NoGpuMessage(props: NoGpuMessage.IProps): React.ReactElement {
  const { trans } = props;
  return (
    <div className="jp-GpuMonitor-noGpu" role="status">
      <p className="jp-GpuMonitor-noGpuTitle">
        {trans.__('No NVIDIA GPU found on this server')}
      </p>
      <p>
        {trans.__(
          'The panel fills in by itself once the server has an NVIDIA GPU and its driver.'
        )}
      </p>
      <details>
        <summary>{trans.__('Details')}</summary>
        <p>{props.detail}</p>
        <HintText hint={props.hint} trans={trans} />
      </details>
    </div>
  );
}

/**
 * What to show in place of the GPUs when a snapshot has none to show: no
 * NVIDIA driver as calm information, the server's error with its hint, or
 * that the server reports no GPU; null when it has GPUs.
 *
 * @param retry - when the monitor last tried and how often it tries again
 */
export function snapshotMessage(
  snapshot: IGpuSnapshot,
  trans: TranslationBundle,
  retry?: string
): React.ReactElement | null {
  // Neither NVML nor nvidia-smi here: a machine without an NVIDIA driver.
  // A Prometheus source without its URL is a setting to correct instead.
  if (
    snapshot.error?.kind === 'not_installed' &&
    snapshot.source !== 'prometheus'
  ) {
    return (
      <NoGpuMessage
        detail={snapshot.error.message}
        hint={snapshot.error.hint}
        trans={trans}
      />
    );
  }
  if (snapshot.error) {
    return (
      <MonitorMessage problem={snapshot.error} retry={retry} trans={trans} />
    );
  }
  if (snapshot.gpus.length === 0) {
    return (
      <p className="jp-GpuMonitor-empty">
        {trans.__('The server reports no GPU.')}
      </p>
    );
  }
  return null;
}
