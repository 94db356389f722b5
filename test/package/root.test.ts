import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findCapstanPackage } from '../../src/package/root.js';
import { findPackageRoot, SchemaError } from '../../src/registry/schema.js';

const top = mkdtempSync(join(tmpdir(), 'capstan-package-root-'));
afterAll(() => rmSync(top, { recursive: true, force: true }));

describe('findCapstanPackage', () => {
  it("walks up to Capstan's package.json, past another package's and an unreadable one", () => {
    const root = join(top, 'capstan');
    const deep = join(root, 'node_modules', 'other', 'lib', 'broken');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'capstan', version: '1.2.3' }));
    writeFileSync(
      join(root, 'node_modules', 'other', 'package.json'),
      JSON.stringify({ name: 'other', version: '9.9.9' }),
    );
    writeFileSync(join(deep, 'package.json'), '{ not json');
    expect(findCapstanPackage(deep)).toEqual({ root, version: '1.2.3' });
    expect(findPackageRoot(deep)).toBe(root);
  });

  it('finds the package this repository is', () => {
    expect(findCapstanPackage(import.meta.dirname)?.root).toBe(join(import.meta.dirname, '..', '..'));
  });

  it('is undefined without one up to the filesystem root; findPackageRoot throws SCHEMA_NOT_FOUND', () => {
    const lone = join(top, 'lone');
    mkdirSync(lone);
    // The temporary directory sits outside any Capstan package.
    expect(findCapstanPackage(lone)).toBeUndefined();
    expect(() => findPackageRoot(lone)).toThrow(SchemaError);
    expect(() => findPackageRoot(lone)).toThrow(expect.objectContaining({ code: 'SCHEMA_NOT_FOUND' }));
  });
});
