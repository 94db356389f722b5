/**
 * Field paths in kube's notation: `a.b`, `a[3]`, `a[key]` (map keys are not quoted, as kube's
 * `field.Path.Key` writes them). Paths are plain strings: they are built only when an error is
 * reported or a nested validator is entered, and strings compare and print for free.
 */

/** `parent.name`, or `name` at the root. */
export function child(parent: string, ...names: string[]): string {
  let out = parent;
  for (const name of names) out = out === '' ? name : `${out}.${name}`;
  return out;
}

/** `parent[i]`. */
export function index(parent: string, i: number): string {
  return `${parent}[${i}]`;
}

/** `parent[key]` for a map entry. */
export function key(parent: string, k: string): string {
  return `${parent}[${k}]`;
}
