import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

/**
 * The properties of {@link CommandButton}.
 */
export namespace CommandButton {
  /**
   * The properties of {@link CommandButton}.
   */
  export interface IProps {
    /**
     * The application's commands.
     */
    commands: CommandRegistry;
    /**
     * The command the button runs.
     */
    id: string;
    /**
     * Why the command is disabled, shown beside the button while it is
     * ("(start the kernel first)"); nothing when not given.
     */
    disabledReason?: string | null;
  }
}

/**
 * A button that runs a command, labelled and enabled as the command is, and
 * while disabled followed by why, where it is read and not only in a
 * tooltip; nothing when the command is not registered (its plugin is
 * disabled).
 */
export function CommandButton(
  props: CommandButton.IProps
): React.ReactElement | null {
  const { commands, id } = props;
  const reasonId = React.useId();
  if (!commands.hasCommand(id)) {
    return null;
  }
  const disabled = !commands.isEnabled(id);
  const reason = disabled ? props.disabledReason : null;
  return (
    <>
      <button
        type="button"
        className="jp-GpuMonitor-button"
        title={commands.caption(id)}
        disabled={disabled}
        aria-describedby={reason ? reasonId : undefined}
        onClick={() => {
          void commands.execute(id);
        }}
      >
        {commands.label(id)}
      </button>
      {reason && (
        <span id={reasonId} className="jp-GpuMonitor-disabledReason">
          {reason}
        </span>
      )}
    </>
  );
}
