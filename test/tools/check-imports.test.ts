import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkEdges, folderEdges, folderOf } from '../../tools/check-imports.js';

const LAYERS = [['storage'], ['src/api'], ['src/resource'], ['src/http']];

describe('check-imports', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  function tree(files: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'check-imports-'));
    dirs.push(root);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }

  it('names folders by their first two segments', () => {
    expect(folderOf('src/resource/patch/x.ts')).toBe('src/resource');
    expect(folderOf('storage/mvcc/store.ts')).toBe('storage/mvcc');
    expect(folderOf('storage/interface.ts')).toBe('storage');
    expect(folderOf('tools/etcd-local.ts')).toBeUndefined();
  });

  it('finds a cycle through type-only and dynamic imports, and the upward edge', () => {
    const root = tree({
      'src/resource/a.ts': "import type { X } from '../http/b.js';\nexport type Y = X;\n",
      'src/http/b.ts': "export type X = 1;\nexport const f = () => import('../resource/a.js');\n",
      'src/api/c.ts': "import { s } from '../../storage/s.js';\nexport const c = s;\n",
      'storage/s.ts': 'export const s = 1;\n',
    });
    const findings = checkEdges(folderEdges(root), LAYERS);
    expect(findings.cycles).toEqual([['src/http', 'src/resource']]);
    expect(findings.upward.map((e) => `${e.from}>${e.to}`)).toEqual(['src/resource>src/http']);
    expect(findings.unplaced).toEqual([]);
  });

  it('reports unplaced folders and accepts a clean layering', () => {
    const root = tree({
      'src/http/b.ts':
        "import { c } from '../api/c.js';\nimport { n } from '../newthing/n.js';\nexport const b = c + n;\n",
      'src/api/c.ts': 'export const c = 1;\n',
      'src/newthing/n.ts': 'export const n = 1;\n',
    });
    const findings = checkEdges(folderEdges(root), LAYERS);
    expect(findings).toEqual({ cycles: [], upward: [], unplaced: ['src/newthing'], clientSide: [] });
  });

  it('keeps the cluster side a client of the API: no storage, server or handler imports', () => {
    const root = tree({
      'src/scheduler/s.ts':
        "import { c } from '../client/c.js';\nimport type { T } from '../api/t.js';\nimport { st } from '../../storage/st.js';\nexport const s: T = c + st;\n",
      'src/client/c.ts': "import { r } from '../resource/r.js';\nexport const c = r;\n",
      'src/api/t.ts': 'export type T = number;\n',
      'src/resource/r.ts': 'export const r = 1;\n',
      'storage/st.ts': 'export const st = 1;\n',
    });
    const findings = checkEdges(folderEdges(root));
    expect(findings.clientSide.map((e) => `${e.from}>${e.to}`).sort()).toEqual([
      'src/client>src/resource',
      'src/scheduler>storage',
    ]);
  });

  it('the repository itself has no folder cycle and keeps the layering', () => {
    const findings = checkEdges(folderEdges(process.cwd()));
    expect(findings.cycles).toEqual([]);
    expect(findings.upward).toEqual([]);
    expect(findings.clientSide).toEqual([]);
  });
});
