/**
 * Have the browser download a text as a file.
 *
 * @param type - the file's media type, e.g. `text/csv`
 */
export function downloadFile(
  text: string,
  fileName: string,
  type: string
): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.appendChild(link);
  link.click();
  link.remove();
  // The download has started once click() returns.
  URL.revokeObjectURL(url);
}
