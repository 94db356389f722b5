/**
 * Where the running build of Capstan is: its version (from its package.json, found by walking up
 * from this module with {@link findCapstanPackage}) and the CLI entry a process of the same build
 * runs.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCapstanPackage } from '../package/root.js';

/** The bundled build's directory, relative to the package root (tools/bundle.ts writes it). */
export const BUNDLE_DIR = join('dist', 'bundle');

/** File name of the bundled build's entry in {@link BUNDLE_DIR}; every chunk of the bundle sits beside it. */
export const BUNDLE_ENTRY = 'capstan.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The `version` of Capstan's package.json, or `0.0.0-unknown` when it cannot be found. */
export function packageVersion(): string {
  return findCapstanPackage(HERE)?.version ?? '0.0.0-unknown';
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
  const root = findCapstanPackage(HERE)?.root;
  const bundled = root === undefined ? undefined : join(root, BUNDLE_DIR, BUNDLE_ENTRY);
  return bundled !== undefined && existsSync(bundled) ? bundled : cliEntryPath();
}
