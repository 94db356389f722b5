/**
 * Completion indexes of Indexed Jobs as kube writes them in `status.completedIndexes`,
 * `status.failedIndexes` and `successPolicy.rules[].succeededIndexes`: sorted, comma-separated
 * intervals (`1,3-5,7`). A set of integers in memory.
 */

/** Parses intervals, ignoring what is malformed or at or above `completions` (as kube does). */
export function parseIndexes(text: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  if (text === undefined || text === '') return out;
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) continue;
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    for (let i = first; i <= last && i < completions; i++) out.add(i);
  }
  return out;
}

/** Formats a set as kube's interval string (`0-2,4`); empty for none. */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    const first = sorted[i] ?? 0;
    let last = first;
    while (i + 1 < sorted.length && sorted[i + 1] === last + 1) last = sorted[++i] ?? last;
    parts.push(first === last ? String(first) : `${first}-${last}`);
    i++;
  }
  return parts.join(',');
}
