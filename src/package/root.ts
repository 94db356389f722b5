/**
 * Where Capstan's package is: the directory of its own `package.json` (name `capstan`), found by
 * walking up from a module's directory. The data files read at run time (the generated schemas,
 * `proto/`, the OpenAPI descriptions, the version in `package.json`) are found from it, so the
 * same code works from `src/` (tests run the sources), `dist/src/` (the tsc build) and
 * `dist/bundle/` (the bundled build).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Capstan's package: the directory holding its `package.json`, and its version. */
export interface CapstanPackage {
  readonly root: string;
  readonly version: string;
}

/**
 * Capstan's `package.json` at or above the directory `from`, or undefined when there is none up to
 * the filesystem root. A `package.json` on the way that is another package's, or that cannot be
 * read, is passed by.
 */
export function findCapstanPackage(from: string): CapstanPackage | undefined {
  let dir = from;
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'capstan' && typeof pkg.version === 'string')
          return { root: dir, version: pkg.version };
      } catch {
        // not a readable package.json: keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
