/**
 * The checked-in `src/api/types/*.ts` must be exactly what `tools/gen-types.ts` makes of the
 * schema registry today. After changing a proto file, run `npm run gen:schemas` and then
 * `node dist/tools/gen-types.js`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findPackageRoot, loadSchemas } from '../../src/registry/schema.js';
import { TYPES_DIR, fileOfPackage, renderTypes } from '../../tools/gen-types.js';

const root = findPackageRoot(fileURLToPath(new URL('.', import.meta.url)));

describe('generated types', () => {
  it('are byte-for-byte the generator output, with no stray files', () => {
    const files = renderTypes(loadSchemas());
    const dir = join(root, TYPES_DIR);
    expect(readdirSync(dir).sort()).toEqual([...files.keys()].sort());
    const stale = [...files]
      .filter(([f, text]) => readFileSync(join(dir, f), 'utf8') !== text)
      .map(([f]) => f);
    expect(stale).toEqual([]);
  });

  it('name files by group and version', () => {
    expect(fileOfPackage('k8s.io.api.core.v1')).toBe('core-v1');
    expect(fileOfPackage('k8s.io.api.apps.v1')).toBe('apps-v1');
    expect(fileOfPackage('k8s.io.apimachinery.pkg.apis.meta.v1')).toBe('meta-v1');
    expect(fileOfPackage('k8s.io.apimachinery.pkg.util.intstr')).toBeUndefined();
  });
});
