/**
 * The placement check of a scheduler bench case: a scheduler that is fast because it ignored a
 * constraint must not look good. Anti-affinity: no two pods of one group on one node. Spread:
 * the measured pods' counts per zone differ by at most 1 (maxSkew 1, every zone has nodes).
 */
import type { SchedulerCase } from './pods.js';

/**
 * Checks where the pods went.
 * @param names measured pod names, `pod-<i>` (pod i is in group i mod `groups`).
 * @returns undefined when the case's constraint holds, else what broke it.
 */
export function checkPlacement(
  c: SchedulerCase,
  names: readonly string[],
  nodeOf: (pod: string) => string | undefined,
  zoneOf: ReadonlyMap<string, string>,
  groups: number,
): string | undefined {
  if (c === 'anti-affinity') {
    const seen = new Set<string>();
    for (let i = 0; i < names.length; i++) {
      const node = nodeOf(names[i] as string);
      const key = `${i % groups}/${node}`;
      if (seen.has(key)) return `two pods of group g${i % groups} on ${node}`;
      seen.add(key);
    }
    return undefined;
  }
  if (c === 'spread') {
    const perZone = new Map<string, number>();
    for (const z of zoneOf.values()) perZone.set(z, 0);
    for (const n of names) {
      const z = zoneOf.get(nodeOf(n) ?? '');
      if (z !== undefined) perZone.set(z, (perZone.get(z) ?? 0) + 1);
    }
    const counts = [...perZone.values()];
    const skew = Math.max(...counts) - Math.min(...counts);
    if (skew > 1) return `zone skew ${skew} (${[...perZone].map(([z, k]) => `${z}: ${k}`).join(', ')})`;
  }
  return undefined;
}
