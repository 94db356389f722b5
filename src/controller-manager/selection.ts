/**
 * `--controllers` semantics, as kube-controller-manager's: `*` turns on every controller not
 * disabled by default, `foo` turns foo on, `-foo` turns it off; a named entry wins over `*`.
 * Names are kube's canonical names or their aliases (`deployment` for `deployment-controller`).
 * An unknown name is an error.
 */
import { FlagError } from '../flags/flags.js';

/** A controller as the selection sees it. */
export interface Selectable {
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly disabledByDefault?: boolean;
}

/**
 * The controllers `selection` enables, in `known` order.
 * @throws FlagError naming the first entry that is not a known controller.
 */
export function selectControllers<T extends Selectable>(
  known: readonly T[],
  selection: readonly string[],
): T[] {
  const canonical = new Map<string, string>();
  for (const c of known) {
    canonical.set(c.name, c.name);
    for (const a of c.aliases ?? []) canonical.set(a, c.name);
  }
  const on = new Set<string>();
  const off = new Set<string>();
  let star = false;
  for (const entry of selection) {
    if (entry === '*') {
      star = true;
      continue;
    }
    const negated = entry.startsWith('-');
    const name = canonical.get(negated ? entry.slice(1) : entry);
    if (name === undefined) {
      throw new FlagError(`--controllers: "${entry}" is not in the list of known controllers`);
    }
    (negated ? off : on).add(name);
  }
  return known.filter((c) => {
    if (on.has(c.name)) return true;
    if (off.has(c.name)) return false;
    return star && c.disabledByDefault !== true;
  });
}
