/**
 * Lists the source files one request runs through: starts a server in this process (memory
 * store), warms it up with a few of the same request, then records V8's precise coverage around
 * one more and prints every file of `src/` and `storage/` in which some function ran.
 *
 * Usage: `npm run build && node dist/tools/trace-request.js [post|get|list] [--stacks]` (default
 * `post`: a ConfigMap create; `get`: one ConfigMap; `list`: the namespace's ConfigMaps). The header line counts the `JSON.parse` and `JSON.stringify` calls (server and
 * client, one process; `--stacks` prints where each came from). The list is what "a POST passes through" means in docs/architecture.md.
 */
import { request } from 'node:https';
import { Session } from 'node:inspector/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemoryStore } from '../storage/mvcc/index.js';
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';
import { ServerLog } from '../src/server/log.js';
import { parseServerArgs } from '../src/server/options.js';
import { startServer } from '../src/server/server.js';

interface Tls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

function send(url: string, tls: Tls, method: string, path: string, body?: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(
      new URL(path, url),
      { method, ...tls, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const verb = process.argv[2] ?? 'post';
  const stacks = process.argv.includes('--stacks');
  const dataDir = await mkdtemp(join(tmpdir(), 'capstan-trace-'));
  const store = await openMemoryStore();
  const parsed = parseServerArgs([
    '--secure-port=0',
    '--bind-address=127.0.0.1',
    `--data-dir=${dataDir}`,
    `--cert-dir=${join(dataDir, 'pki')}`,
  ]);
  if (parsed.help) throw new Error('unreachable: no --help given');
  const server = await startServer(parsed.options, { log: new ServerLog(() => {}), store });
  try {
    const { ca, cert, key } = readKubeconfigCredentials(server.kubeconfigPath);
    if (ca === undefined || cert === undefined || key === undefined) throw new Error('no admin credentials');
    const tls = { ca, cert, key };
    const path = '/api/v1/namespaces/default/configmaps';
    let n = 0;
    const target = verb === 'get' ? `${path}/cm-0` : path;
    const once = (): Promise<number> =>
      verb === 'get' || verb === 'list'
        ? send(server.url, tls, 'GET', target)
        : send(
            server.url,
            tls,
            'POST',
            path,
            JSON.stringify({ metadata: { name: `cm-${n++}` }, data: { a: 'b' } }),
          );
    if (verb === 'get' || verb === 'list')
      await send(server.url, tls, 'POST', path, JSON.stringify({ metadata: { name: 'cm-0' } }));
    for (let i = 0; i < 20; i++) await once();
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    const counts = { parse: 0, stringify: 0 };
    const { parse, stringify } = JSON;
    const note = (what: 'parse' | 'stringify'): void => {
      counts[what]++;
      if (stacks) console.log(`${what}: ${new Error().stack?.split('\n').slice(3, 6).join(' <')}`);
    };
    JSON.parse = (...args: Parameters<typeof parse>): unknown => (note('parse'), parse(...args));
    JSON.stringify = ((...args: Parameters<typeof stringify>) => (
      note('stringify'),
      stringify(...args)
    )) as typeof stringify;
    let status: number;
    try {
      status = await once();
    } finally {
      JSON.parse = parse;
      JSON.stringify = stringify;
    }
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
    const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
    const files = new Set<string>();
    for (const script of result) {
      if (!script.url.startsWith('file:')) continue;
      const file = relative(root, fileURLToPath(script.url)).replace(/\.js$/, '.ts');
      if (!file.startsWith('src/') && !file.startsWith('storage/')) continue;
      if (script.functions.some((f) => f.ranges.some((r) => r.count > 0))) files.add(file);
    }
    console.log(
      `# ${verb === 'post' ? 'POST' : 'GET'} ${target} → ${status}: ${files.size} files, JSON.parse ×${counts.parse}, JSON.stringify ×${counts.stringify}`,
    );
    for (const f of [...files].sort()) console.log(f);
  } finally {
    await server.shutdown();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
