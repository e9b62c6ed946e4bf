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
  }
}

/**
 * A button that runs a command, labelled and enabled as the command is;
 * nothing when the command is not registered (its plugin is disabled).
 */
export function CommandButton(
  props: CommandButton.IProps
): React.ReactElement | null {
  const { commands, id } = props;
  if (!commands.hasCommand(id)) {
    return null;
  }
  return (
    <button
      type="button"
      className="jp-GpuMonitor-button"
      title={commands.caption(id)}
      disabled={!commands.isEnabled(id)}
      onClick={() => {
        void commands.execute(id);
      }}
    >
      {commands.label(id)}
    </button>
  );
}
