/**
 * Fails on import cycles between the top-level folders of `src/` and `storage/`, and on imports
 * that go up the intended layering ({@link LAYERS}, the one place it is written down).
 *
 * Usage: `node dist/tools/check-imports.js [repo root]` (tools/test.sh runs it before the tests).
 * Every relative import counts, `import type` included: a type-only import still ties the
 * folders' designs together. Folders not in {@link LAYERS} are checked for cycles and reported
 * as a warning, so a new folder is placed in the layering when it is merged.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The layering, lowest first. A folder may import folders of its own layer or a lower one
 * (imports within one layer are still checked for cycles); never a higher one.
 */
export const LAYERS: readonly (readonly string[])[] = [
  // The storage engine's contract, errors and wrappers; its backends.
  ['storage'],
  ['storage/mvcc', 'storage/etcd'],
  // Leaves: the API's shared shapes and errors, flag syntax, certificates, where the package is.
  ['src/api', 'src/flags', 'src/pki', 'src/package'],
  // The cluster side (see CLIENT_SIDE): the client library, then what acts through it.
  ['src/client'],
  ['src/controllers', 'src/scheduler', 'src/agent', 'src/proxy', 'src/dns', 'src/netpol'],
  ['src/controller-manager'],
  // The served kinds and their schemas.
  ['src/registry'],
  // Libraries over the schemas: structured merge, the protobuf codec, validation, OpenAPI.
  // CEL (Kubernetes' CEL environment and libraries) serves CRD rules and admission policies.
  ['src/apply', 'src/codec', 'src/validation', 'src/openapi', 'src/conversion', 'src/cel'],
  // Defaulting (uses validation's helpers), table printers, CRD structural schemas.
  ['src/defaults', 'src/table', 'src/schema'],
  // Per-kind behaviour, composed from the layers below.
  ['src/kinds'],
  // Response representations and the storage encoding; the watch cache.
  ['src/representation', 'src/encryption'],
  ['src/watchcache'],
  // Admission: the plugin chain the resource handler runs on every write, its plugins.
  ['src/admission'],
  // The generic resource handler.
  ['src/resource'],
  // Service networking: cluster IP and node port allocation over the resource layer.
  ['src/ipam'],
  // Its clients: controllers, the HTTP routes, authentication and authorization (their review
  // endpoints are routes), service accounts, certificate signing.
  [
    'src/apiserver-loops',
    'src/http',
    'src/authn',
    'src/tls',
    'src/serviceaccount',
    'src/authz',
    'src/certificates',
    'src/apiextensions',
    'src/aggregation',
    'src/audit',
    'src/flowcontrol',
    'src/metrics-api',
  ],
  // Wiring: the server, its metrics, the load generator, the semantics checker.
  ['src/server', 'src/metrics', 'src/bench', 'src/verify'],
  // envtest assets (shims that start the server), then the command line.
  ['src/envtest'],
  // The one-command cluster: the server and a node in one process.
  ['src/cluster'],
  ['src/cli'],
];

/**
 * Everything that acts on the API is a client of it: these folders may import only each other
 * and {@link CLIENT_SIDE_MAY_IMPORT} (the API's shapes and errors, flag syntax, certificates,
 * where the package's data files are),
 * never the server, the resource handlers, storage or the watch cache. So each runs unchanged
 * against kube-apiserver.
 */
export const CLIENT_SIDE: readonly string[] = [
  'src/client',
  'src/controllers',
  'src/scheduler',
  'src/agent',
  'src/proxy',
  'src/dns',
  'src/netpol',
  'src/controller-manager',
];
export const CLIENT_SIDE_MAY_IMPORT: readonly string[] = ['src/api', 'src/flags', 'src/pki', 'src/package'];

/** One import between two folders, with a file that makes it (for the message). */
export interface FolderEdge {
  readonly from: string;
  readonly to: string;
  readonly example: string;
}

/** What {@link checkEdges} found. */
export interface Findings {
  /** Each cycle as the folders in it (a strongly connected component of two or more). */
  readonly cycles: readonly (readonly string[])[];
  /** Imports from a lower layer to a higher one. */
  readonly upward: readonly FolderEdge[];
  /** Folders that import or are imported but are not in the layering. */
  readonly unplaced: readonly string[];
  /** Imports from a {@link CLIENT_SIDE} folder to anything but the client side and its leaves. */
  readonly clientSide: readonly FolderEdge[];
}

/** The folder unit of a repo-relative file path (`src/resource/x.ts` → `src/resource`). */
export function folderOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] !== 'src' && parts[0] !== 'storage') return undefined;
  if (parts.length <= 2) return parts[0];
  return `${parts[0]}/${parts[1]}`;
}

/** Cycles, upward imports and unplaced folders of a folder graph. */
export function checkEdges(
  edges: readonly FolderEdge[],
  layers: readonly (readonly string[])[] = LAYERS,
): Findings {
  const rank = new Map<string, number>();
  layers.forEach((layer, i) => layer.forEach((f) => rank.set(f, i)));
  const out = new Map<string, Set<string>>();
  const nodes = new Set<string>();
  for (const e of edges) {
    nodes.add(e.from).add(e.to);
    let s = out.get(e.from);
    if (s === undefined) out.set(e.from, (s = new Set()));
    s.add(e.to);
  }
  const upward = edges.filter((e) => {
    const a = rank.get(e.from);
    const b = rank.get(e.to);
    return a !== undefined && b !== undefined && b > a;
  });
  const unplaced = [...nodes].filter((n) => !rank.has(n)).sort();
  const clientSide = edges.filter(
    (e) =>
      CLIENT_SIDE.includes(e.from) && !CLIENT_SIDE.includes(e.to) && !CLIENT_SIDE_MAY_IMPORT.includes(e.to),
  );
  return { cycles: stronglyConnected(nodes, out), upward, unplaced, clientSide };
}

/** Tarjan's algorithm; components of one node are not cycles (self-imports are not edges). */
function stronglyConnected(
  nodes: ReadonlySet<string>,
  out: ReadonlyMap<string, ReadonlySet<string>>,
): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of out.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const n of [...nodes].sort()) if (!index.has(n)) visit(n);
  return cycles;
}

function sourceFiles(root: string, dir: string): string[] {
  const files: string[] = [];
  if (!existsSync(join(root, dir))) return files;
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) files.push(...sourceFiles(root, path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path.split(sep).join('/'));
  }
  return files;
}

/** The folder-to-folder imports of `src/` and `storage/` under `root`. */
export function folderEdges(root: string): FolderEdge[] {
  const edges = new Map<string, FolderEdge>();
  for (const file of [...sourceFiles(root, 'src'), ...sourceFiles(root, 'storage')]) {
    const from = folderOf(file);
    if (from === undefined) continue;
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const imported of info.importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const target = relative(root, resolve(root, dirname(file), imported.fileName))
        .split(sep)
        .join('/');
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      const key = `${from} ${to}`;
      if (!edges.has(key)) edges.set(key, { from, to, example: `${file} imports ${imported.fileName}` });
    }
  }
  return [...edges.values()];
}

function main(): number {
  const root = resolve(process.argv[2] ?? '.');
  const edges = folderEdges(root);
  const { cycles, upward, unplaced, clientSide } = checkEdges(edges);
  for (const folder of unplaced) {
    console.warn(`check-imports: warning: ${folder} is not in LAYERS (tools/check-imports.ts); place it`);
  }
  for (const cycle of cycles) {
    console.error(`check-imports: folder cycle: ${cycle.join(' <-> ')}`);
    for (const e of edges) {
      if (cycle.includes(e.from) && cycle.includes(e.to))
        console.error(`  ${e.from} -> ${e.to} (${e.example})`);
    }
  }
  for (const e of upward)
    console.error(`check-imports: ${e.from} imports the higher layer ${e.to} (${e.example})`);
  for (const e of clientSide)
    console.error(
      `check-imports: ${e.from} is a client of the API and may not import ${e.to} (${e.example})`,
    );
  if (cycles.length > 0 || upward.length > 0 || clientSide.length > 0) return 1;
  console.log(`check-imports: ${edges.length} folder imports, no cycle, layering kept`);
  return 0;
}

if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)
) {
  process.exitCode = main();
}
