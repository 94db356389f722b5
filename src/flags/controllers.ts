/**
 * kube-controller-manager's `--controllers` selection: a list of names where `*` turns on every
 * controller that is on by default, `foo` turns `foo` on and `-foo` turns it off. The first entry
 * that names a controller decides for it (so `-foo,*` and `*,-foo` both leave `foo` off, and
 * `foo,-foo` leaves it on); a controller no entry names is on when `*` is listed and it is not
 * disabled by default. An empty list runs none. Names may be canonical (`namespace-controller`)
 * or an alias (`namespace`), as kube's flag accepts both.
 */
import { FlagError } from './flags.js';

/** A controller a command can run: its canonical name and the other names it answers to. */
export interface KnownController {
  readonly name: string;
  readonly aliases?: readonly string[];
  /** Left off by `*` (kube's `isDisabledByDefault`): only an explicit `name` turns it on. */
  readonly disabledByDefault?: boolean;
}

/** The outcome of {@link parseControllerSelection}. */
export interface ControllerSelection {
  /** Whether the controller (canonical name or alias) runs. @throws Error for an unknown name */
  enabled(name: string): boolean;
  /** The canonical names of the controllers that run, in the order they were declared. */
  readonly names: readonly string[];
}

/**
 * Parses a `--controllers` value (the flag's comma-split list, or one comma-separated string)
 * against the controllers a command knows.
 * @throws FlagError naming every entry that is no known controller (kube's
 *   `"foo" is not in the list of known controllers`), with or without its `-`.
 */
export function parseControllerSelection(
  value: string | readonly string[],
  known: readonly KnownController[],
  flagName = 'controllers',
): ControllerSelection {
  const entries = (typeof value === 'string' ? value.split(',') : value)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const canonical = new Map<string, KnownController>();
  for (const c of known) {
    canonical.set(c.name, c);
    for (const a of c.aliases ?? []) canonical.set(a, c);
  }
  const errors: string[] = [];
  // Each entry reduced to (canonical name, on) or the star.
  const decisions: ({ readonly name: string; readonly on: boolean } | '*')[] = [];
  for (const entry of entries) {
    if (entry === '*') {
      decisions.push('*');
      continue;
    }
    const bare = entry.startsWith('-') ? entry.slice(1) : entry;
    const c = canonical.get(bare);
    if (c === undefined) {
      errors.push(`${JSON.stringify(bare)} is not in the list of known controllers`);
      continue;
    }
    decisions.push({ name: c.name, on: !entry.startsWith('-') });
  }
  if (errors.length > 0) {
    const names = known.map((c) => c.name).join(', ');
    throw new FlagError(`--${flagName}: ${errors.join('; ')} (known: ${names})`);
  }
  const decide = (c: KnownController): boolean => {
    let star = false;
    for (const d of decisions) {
      if (d === '*') star = true;
      else if (d.name === c.name) return d.on;
    }
    return star && c.disabledByDefault !== true;
  };
  const on = new Set(known.filter(decide).map((c) => c.name));
  return {
    enabled(name: string): boolean {
      const c = canonical.get(name);
      if (c === undefined) throw new Error(`no controller named ${JSON.stringify(name)}`);
      return on.has(c.name);
    },
    names: known.filter((c) => on.has(c.name)).map((c) => c.name),
  };
}
