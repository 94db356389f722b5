/**
 * The bundled build, `dist/bundle/`, after tsc (`npm run build` runs both): the CLI
 * (`dist/src/cli/main.js` and everything it imports) as one CommonJS file `capstan.cjs` made with
 * esbuild, a smaller one per long-running component (`capstan-scheduler.cjs`, …: main.js with
 * only that command; src/cli/bundles.ts), the entry `capstan.js` (src/cli/bundle-loader.ts) that runs it with V8's code cache,
 * and that cache, `capstan.cjs.cache`, written by starting a server once (the warm-up, which is
 * also a smoke test of the bundle: the build fails when it does not start). The same code as
 * tsc's output, loaded from one file with most of it already compiled instead of ~450 modules
 * from `dist/` and `node_modules/`: a server answers its first request in well under half the
 * time (docs/bench/startup.md).
 *
 *   node dist/tools/bundle.js [--metafile FILE] [--no-warm-up]
 *
 * What stays outside the bundle, loaded from `node_modules/` at run time:
 * - classic-level's native binding (`node-gyp-build` finds the `.node` file next to its package);
 * - the etcd client (`etcd3` with gRPC), loaded only with `--etcd-servers`;
 * - what the code loads with `createRequire` on purpose (yaml for request bodies, protobufjs for
 *   the OpenAPI v2 protobuf document), resolved from the bundle's directory upwards.
 * Data files the code reads at run time (the generated schemas, `proto/`, `package.json`) are
 * found by walking up from the bundle to the package root, as from `dist/src/`: the bundle works
 * only inside the package it was built in.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';
import { bundleFileOf, CLI_BUNDLE, COMPONENT_BUNDLES } from '../src/cli/bundles.js';
import { CODE_CACHE_WRITE_ENV } from '../src/cli/code-cache.js';
import { BUNDLE_DIR, BUNDLE_ENTRY } from '../src/server/package-version.js';

/** The package root (this file is `dist/tools/bundle.js`). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT_DIR = join(ROOT, BUNDLE_DIR);
const BUNDLE = join(OUT_DIR, CLI_BUNDLE);
const ENTRY = join(OUT_DIR, BUNDLE_ENTRY);
const CACHE = join(OUT_DIR, 'capstan.cjs.cache');
/** How long the warm-up server may take to print that it serves. */
const WARM_UP_TIMEOUT_MS = 60_000;
/** How long it keeps running after that (the post-start work: bootstrap objects, controllers). */
const WARM_UP_RUN_MS = 1_500;

/**
 * `import.meta.url` in a CommonJS bundle: the bundle file's URL (every module of the bundle now
 * lives in that one file, so paths found from it walk up from `dist/bundle/`).
 */
const BANNER = "var __capstanImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";

/**
 * classic-level's `./binding` loads the native addon relative to its own directory: leave that one
 * file in node_modules (the rest of classic-level, abstract-level and friends are bundled).
 */
const nativeBinding: Plugin = {
  name: 'capstan-native-binding',
  setup(b) {
    b.onResolve({ filter: /^\.\/binding(\.js)?$/ }, (args) =>
      /[\\/]node_modules[\\/]classic-level[\\/]/.test(args.importer)
        ? { path: 'classic-level/binding.js', external: true }
        : undefined,
    );
  },
};

/**
 * No long.js in the bundles: protobufjs (bundled only for the node agent's CRI schemas, the light
 * build) then reads 64-bit integers as numbers, exact below 2^53, which is all the agent reads
 * (src/agent/cri/schema.ts). long.js compiles a WebAssembly module as it loads, ~0.75 MiB of an
 * idle agent's RSS. (The etcd client stays outside the bundle with its own protobufjs and long.js;
 * the server's own etcd channel reads its messages without protobufjs, storage/etcd/messages.ts.)
 */
const noLongJs: Plugin = {
  name: 'capstan-no-long-js',
  setup(b) {
    b.onResolve({ filter: /^long$/ }, () => ({ path: 'long', namespace: 'capstan-no-long-js' }));
    b.onLoad({ filter: /.*/, namespace: 'capstan-no-long-js' }, () => ({
      contents: 'module.exports = null;',
    }));
  },
};

/**
 * The only modules of Capstan's own that may load protobufjs in a bundle: without long.js (see
 * {@link noLongJs}) its 64-bit integers are doubles, exact only below 2^53, which these checked
 * they never need. A new importer fails the build instead of rounding at run time, as the
 * server's etcd channel once rounded lease ids (docs/bench/compare-kube-ha.md).
 */
const LONG_FREE_PROTOBUF_USERS: ReadonlySet<string> = new Set(['dist/src/agent/cri/schema.js']);

/** @throws Error naming each module of Capstan's own that imports protobufjs without leave. */
function checkProtobufImporters(metafile: Metafile): void {
  const offenders = Object.entries(metafile.inputs)
    .filter(([path]) => !path.includes('node_modules/'))
    .filter(([, input]) => input.imports.some((i) => i.path.includes('node_modules/protobufjs/')))
    .map(([path]) => path)
    .filter((path) => !LONG_FREE_PROTOBUF_USERS.has(path));
  if (offenders.length > 0)
    throw new Error(
      `${offenders.join(', ')} ${offenders.length === 1 ? 'imports' : 'import'} protobufjs, which the bundles load without long.js: its 64-bit ` +
        'integers would be doubles. Decode them another way, or check and list the module in ' +
        'LONG_FREE_PROTOBUF_USERS (tools/bundle.ts).',
    );
}

/**
 * The bundle as the loader compiles it: CommonJS's module function around the code (so the loader
 * compiles the file's text as it is, without a second copy), ASCII only (so it is read as a
 * one-byte string: half the memory of a two-byte one). esbuild escapes non-ASCII text in strings
 * but not in regular expressions; `\uXXXX` means the same character in a string, a template, a
 * regular expression or an identifier, and no comment is left.
 */
function asScript(code: string): string {
  // An escaped non-ASCII character (`\\µ`) would turn into an escaped backslash: refuse it.
  if (/\\[^\x00-\x7f]/.test(code)) throw new Error('the bundle escapes a non-ASCII character');
  const body = code
    .replace(/^#!.*\n/, '')
    .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // Strict mode as the ES modules it was made from (a "use strict" after the banner is no directive).
  return `(function (exports, require, module, __filename, __dirname) {"use strict";${BANNER}${body}\n})`;
}

/**
 * A component's bundle (src/cli/bundles.ts): main.js's lazy imports of the other commands'
 * modules resolve to an empty module, so only `keep` (and what it imports) is bundled. The bundle
 * runs only for its own command (the loader picks it by name), so the left-out branches never run.
 */
function onlyCommand(keep: readonly string[]): Plugin {
  const main = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const kept = new Set(keep.map((m) => join(ROOT, 'dist', 'src', m)));
  return {
    name: 'capstan-only-command',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) =>
        args.kind === 'dynamic-import' &&
        args.importer === main &&
        !kept.has(join(args.resolveDir, args.path))
          ? { path: args.path, namespace: 'capstan-left-out' }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'capstan-left-out' }, () => ({ contents: 'export {};' }));
    },
  };
}

/** Bundles main.js into `outfile` (with `plugins`); returns esbuild's metafile. */
async function bundleCli(outfile: string, plugins: Plugin[]): Promise<Metafile> {
  const result = await build({
    entryPoints: [join(ROOT, 'dist', 'src', 'cli', 'main.js')],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // `import()` becomes a lazy `require` of the module's code inside the bundle: the script runs
    // in a vm.Script, which has no dynamic-import hook. Modules imported lazily stay lazy.
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__capstanImportMetaUrl' },
    external: ['etcd3'],
    plugins: [nativeBinding, noLongJs, ...plugins],
    // No comments or indentation: the script source stays in the heap for the process's life.
    // Identifiers keep their names (stack traces, profiles).
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    write: false,
  });
  const left = Object.values(result.metafile.outputs)
    .flatMap((o) => o.imports)
    .filter((i) => i.kind === 'dynamic-import');
  if (left.length > 0)
    throw new Error(`the bundle still holds dynamic import() of ${left.map((i) => i.path).join(', ')}`);
  checkProtobufImporters(result.metafile);
  const code = result.outputFiles.find((f) => f.path === outfile)?.text;
  if (code === undefined) throw new Error(`esbuild wrote no ${outfile}`);
  await writeFile(outfile, asScript(code), 'latin1');
  return result.metafile;
}

async function bundle(metafilePath: string | undefined): Promise<void> {
  const metafile = await bundleCli(BUNDLE, []);
  if (metafilePath !== undefined) await writeFile(metafilePath, JSON.stringify(metafile));
  for (const [command, modules] of Object.entries(COMPONENT_BUNDLES))
    await bundleCli(join(OUT_DIR, bundleFileOf(command)), [onlyCommand(modules)]);
  await build({
    entryPoints: [join(ROOT, 'dist', 'src', 'cli', 'bundle-loader.js')],
    outfile: ENTRY,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  await chmod(ENTRY, 0o755);
}

/** Starts a server from the bundle with the cache write switched on, lets it start, stops it. */
async function warmUp(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bundle-warm-up-'));
  try {
    const child = spawn(
      process.execPath,
      [
        ENTRY,
        'server',
        `--data-dir=${join(dir, 'data')}`,
        '--secure-port=0',
        '--bind-address=127.0.0.1',
        '--authorization-mode=Node,RBAC',
      ],
      { env: { ...process.env, [CODE_CACHE_WRITE_ENV]: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const collect = (c: Buffer): void => {
      out = (out + c.toString('utf8')).slice(-8192);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const serving = await new Promise<boolean>((r) => {
      const timer = setTimeout(() => r(false), WARM_UP_TIMEOUT_MS);
      child.stdout.on('data', () => {
        if (out.includes('serving on ')) {
          clearTimeout(timer);
          r(true);
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        r(false);
      });
    });
    if (serving) await new Promise((r) => setTimeout(r, WARM_UP_RUN_MS));
    child.kill('SIGTERM');
    const code = await exited;
    if (!serving || code !== 0)
      throw new Error(
        `the bundle's warm-up server did not start and stop cleanly (exit ${String(code)}):\n${out}`,
      );
    await stat(CACHE);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const i = argv.indexOf('--metafile');
  await rm(OUT_DIR, { recursive: true, force: true });
  await mkdir(OUT_DIR, { recursive: true });
  await bundle(i >= 0 ? argv[i + 1] : undefined);
  if (!argv.includes('--no-warm-up')) await warmUp();
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
