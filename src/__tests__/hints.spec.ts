/**
 * @jest-environment node
 */
import { hintParts, rootCommands } from '../format/hints';
import { driverNotLoadedSnapshot } from './payloads';

describe('hintParts', () => {
  it("cuts the server's hint for an unloaded driver into prose and its two commands", () => {
    const hint = driverNotLoadedSnapshot().error!.hint;

    const parts = hintParts(hint);

    expect(parts.filter(part => part.code).map(part => part.text)).toEqual([
      'sudo modprobe nvidia',
      'dmesg | grep -i nvidia'
    ]);
    expect(parts.map(part => part.text).join('')).toBe(hint.replace(/`/g, ''));
  });

  it('keeps a hint with a lone backtick as prose', () => {
    expect(hintParts("it's `odd")).toEqual([
      { text: "it's `odd", code: false }
    ]);
    expect(hintParts('')).toEqual([]);
  });
});

describe('rootCommands', () => {
  it('picks the commands that need sudo', () => {
    expect(rootCommands(driverNotLoadedSnapshot().error!.hint)).toEqual([
      'sudo modprobe nvidia'
    ]);
    expect(rootCommands('check `dmesg`')).toEqual([]);
  });
});
