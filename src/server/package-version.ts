/**
 * Where the running build of Capstan is: its package root (Capstan's own package.json, found by
 * walking up from this module, so it works from `dist/src/server` (the tsc build), from
 * `dist/bundle` (the bundled build) and from `src/server` (tests run the sources)), its version,
 * and the CLI entry a process of the same build runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** File name of the bundled build's entry; every chunk of the bundle sits beside it. */
export const BUNDLE_ENTRY = 'capstan.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Capstan's package.json at or above this module: its directory and fields, or undefined. */
function findPackage(): { root: string; version: string } | undefined {
  let dir = HERE;
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

/** The `version` of Capstan's package.json, or `0.0.0-unknown` when it cannot be found. */
export function packageVersion(): string {
  return findPackage()?.version ?? '0.0.0-unknown';
}

/**
 * Absolute path of the `capstan` CLI entry of the build this module belongs to: the bundle's
 * `dist/bundle/capstan.js` when running bundled, else `dist/src/cli/main.js` (what a child
 * process such as a bench server or an envtest shim runs).
 */
function cliEntryPath(): string {
  const bundled = join(HERE, BUNDLE_ENTRY);
  if (existsSync(bundled)) return bundled;
  return join(HERE, '..', 'cli', 'main.js');
}

/**
 * The fastest-starting CLI entry of this package: the bundle (`dist/bundle/capstan.js`) when it
 * was built, else {@link cliEntryPath}. For processes started often (envtest's kube-apiserver).
 */
export function fastestCliEntryPath(): string {
  const root = findPackage()?.root;
  const bundled = root === undefined ? undefined : join(root, 'dist', 'bundle', BUNDLE_ENTRY);
  return bundled !== undefined && existsSync(bundled) ? bundled : cliEntryPath();
}
