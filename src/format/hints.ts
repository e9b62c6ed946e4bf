/**
 * A piece of a hint: prose, or a command to run (written between backticks
 * by the server).
 */
export interface IHintPart {
  /**
   * The piece's text, without its backticks.
   */
  text: string;
  /**
   * Whether it is a command.
   */
  code: boolean;
}

/**
 * A hint cut into prose and commands: "run `sudo modprobe nvidia`, or
 * reboot" is the prose "run ", the command, then ", or reboot". A lone
 * backtick stays prose.
 */
export function hintParts(hint: string): IHintPart[] {
  const pieces = hint.split('`');
  if (pieces.length % 2 === 0) {
    return hint === '' ? [] : [{ text: hint, code: false }];
  }
  return pieces
    .map((text, position) => ({ text, code: position % 2 === 1 }))
    .filter(part => part.text !== '');
}

/**
 * The commands of a hint that need root (they start with `sudo`): what a
 * user without it asks an administrator to run.
 */
export function rootCommands(hint: string): string[] {
  return hintParts(hint)
    .filter(part => part.code && /^sudo\s/.test(part.text))
    .map(part => part.text);
}
