/**
 * Newline-delimited text from a stream's chunks (a JSON watch): each whole line to `onLine`, the
 * unfinished rest kept for the next chunk. A rest longer than `maxLine` is dropped: a stream whose
 * lines grow without end is broken, and keeping it would only grow the buffer.
 */
export function lineSplitter(
  onLine: (line: string) => void,
  maxLine = Number.POSITIVE_INFINITY,
): (chunk: Buffer) => void {
  let pending = '';
  return (chunk) => {
    pending += chunk.toString('utf8');
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      onLine(line);
    }
    if (pending.length > maxLine) pending = '';
  };
}
