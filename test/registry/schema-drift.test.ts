/**
 * The checked-in `src/registry/generated/schemas.json` must be exactly what
 * `tools/gen-schemas.ts` makes of `proto/` today. After changing a proto file, run
 * `npm run build && node dist/tools/gen-schemas.js` (the `gen:schemas` script).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE, findPackageRoot, type SchemaDocument } from '../../src/registry/schema.js';
import { generateSchemas, renderSchemas, stableStringify } from '../../tools/gen-schemas.js';

const root = findPackageRoot(fileURLToPath(new URL('.', import.meta.url)));

describe('generated schemas', () => {
  const { document } = generateSchemas(join(root, 'proto'));
  const onDisk = readFileSync(join(root, SCHEMA_FILE), 'utf8');

  it('have the same messages as proto/ generates (names listed when they differ)', () => {
    const disk = (JSON.parse(onDisk) as SchemaDocument).messages;
    const fresh = document.messages;
    const names = new Set([...Object.keys(disk), ...Object.keys(fresh)]);
    const differing = [...names].filter((n) => stableStringify(disk[n]) !== stableStringify(fresh[n])).sort();
    expect(differing).toEqual([]);
  });

  it('are byte-for-byte the generator output', () => {
    // Compared as a boolean so a drift does not print a 200 kB diff; the test above names the messages.
    expect(onDisk === renderSchemas(document)).toBe(true);
  });
});
