/**
 * The longest notification JupyterLab shows without cutting it.
 */
export const MAX_MESSAGE_LENGTH = 140;

/**
 * A message cut to what a notification shows, with an ellipsis.
 */
export function notificationText(message: string): string {
  return message.length <= MAX_MESSAGE_LENGTH
    ? message
    : `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}
