/**
 * The longest notification JupyterLab shows without cutting it.
 */
export const MAX_MESSAGE_LENGTH = 140;

/**
 * How long a warning stays on the screen, in milliseconds. It stays in the
 * notification centre (the bell of the status bar) after that; errors stay
 * on the screen until closed, since they need someone to act.
 */
export const WARNING_AUTO_CLOSE_MS = 20000;

/**
 * A message cut to what a notification shows, with an ellipsis.
 */
export function notificationText(message: string): string {
  return message.length <= MAX_MESSAGE_LENGTH
    ? message
    : `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}
