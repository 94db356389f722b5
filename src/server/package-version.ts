/**
 * Capstan's own version (package.json), found by walking up from this module, so it works from
 * `dist/src/cli` (the built CLI) and from `src/cli` (tests run the sources).
 */
import { existsSync, readFileSync } from 'node:fs';

/** The `version` of Capstan's package.json, or `0.0.0-unknown` when it cannot be found. */
export function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    const url = new URL(rel, import.meta.url);
    if (!existsSync(url)) continue;
    const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: unknown; version?: unknown };
    if (pkg.name === 'capstan' && typeof pkg.version === 'string') return pkg.version;
  }
  return '0.0.0-unknown';
}
