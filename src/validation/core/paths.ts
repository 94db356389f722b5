/**
 * File-system path rules for mounts and projected files: sub-paths stay below the mount,
 * volume file paths are relative and do not step up.
 */
import { invalid, type FieldError } from '../field-error.js';

/** No `..` path element. */
export function validatePathNoBacksteps(p: string, path: string, errs: FieldError[]): void {
  if (p.replaceAll('\\', '/').split('/').includes('..')) errs.push(invalid(path, p, "must not contain '..'"));
}

/** Relative and without `..` elements (sub-paths, gitRepo directories). */
export function validateLocalDescendingPath(p: string, path: string, errs: FieldError[]): void {
  if (p.startsWith('/')) errs.push(invalid(path, p, 'must be a relative path'));
  validatePathNoBacksteps(p, path, errs);
}

/** A relative file path that does not start with `..` (volume items). */
export function validateLocalNonReservedPath(p: string, path: string, errs: FieldError[]): void {
  validateLocalDescendingPath(p, path, errs);
  if (p.startsWith('..') && !p.startsWith('../')) errs.push(invalid(path, p, "must not start with '..'"));
}
