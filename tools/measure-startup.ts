/**
 * Start-up of `capstan server` builds side by side (issue 16 item 6, issue 19 item 3): each run
 * starts every build once, interleaved, on a fresh data directory and a free port, and times
 * process start → the first authenticated 200 (`GET /api/v1/namespaces/default`, which also needs
 * the `default` namespace made) and → the first `/readyz` 200, the server's CPU time (user + system)
 * at that point (less sensitive than wall time to the machine's other load), and the RSS a second
 * later (not yet idle: `capstan bench startup` reads the idle RSS once V8 has shrunk the heap).
 * With `--envtest-runs N` it also times controller-runtime envtest's `Start()`/`Stop()`
 * with each build as envtest's kube-apiserver (`capstan envtest-assets`), through the Go program
 * in test/fixtures/envtest (built here with the Go module proxy; `go` must be on PATH).
 * `--envtest-assets LABEL=DIR` adds another KUBEBUILDER_ASSETS directory to the envtest runs,
 * interleaved with the builds: kube-apiserver and etcd reference binaries, for the comparison.
 *
 *   npm run build && node dist/tools/measure-startup.js [--runs 10] [--envtest-runs 10]
 *       [--main LABEL=PATH ...] [--server-arg FLAG ...] [--json FILE]
 *
 * Without `--main`: the tsc build (`dist/src/cli/main.js`) and the bundle
 * (`dist/bundle/capstan.js`). Name another checkout's build to compare before and after, e.g.
 * `--main before=/tmp/old/dist/src/cli/main.js --main after=dist/bundle/capstan.js` (a build
 * outside this checkout writes its envtest assets with its own `envtest-assets`).
 * Medians (and min–max) per build are printed; the machine's other load shows in the spread.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readProc } from '../src/bench/proc.js';
import { spawnServer } from '../src/bench/server-process.js';
import { median } from '../src/bench/stats.js';
import { writeEnvtestAssets } from '../src/envtest/assets.js';
import { BUNDLE_DIR, BUNDLE_ENTRY } from '../src/server/package-version.js';

const run = promisify(execFile);
const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');
const SETTLE_MS = 1000;

interface Build {
  readonly label: string;
  readonly main: string;
}

interface Samples {
  firstRequestMs: number[];
  readyzMs: number[];
  cpuMs: number[];
  earlyRssMiB: number[];
  envtestStartMs: number[];
  envtestStopMs: number[];
}

interface Args {
  runs: number;
  envtestRuns: number;
  builds: Build[];
  serverArgs: string[];
  json: string | undefined;
  /** Other KUBEBUILDER_ASSETS directories timed with envtest only (`--envtest-assets`). */
  extraAssets: { label: string; dir: string }[];
}

function parseArgs(argv: readonly string[]): Args {
  const out: Args = {
    runs: 10,
    envtestRuns: 0,
    builds: [],
    serverArgs: [],
    json: undefined,
    extraAssets: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--runs':
        out.runs = Number(value());
        break;
      case '--envtest-runs':
        out.envtestRuns = Number(value());
        break;
      case '--main': {
        const v = value();
        const eq = v.indexOf('=');
        const path = resolve(eq < 0 ? v : v.slice(eq + 1));
        out.builds.push({ label: eq < 0 ? v : v.slice(0, eq), main: path });
        break;
      }
      case '--envtest-assets': {
        const v = value();
        const eq = v.indexOf('=');
        if (eq < 1) throw new Error('--envtest-assets takes LABEL=DIR');
        out.extraAssets.push({ label: v.slice(0, eq), dir: resolve(v.slice(eq + 1)) });
        break;
      }
      case '--server-arg':
        out.serverArgs.push(value());
        break;
      case '--json':
        out.json = value();
        break;
      default:
        throw new Error(`unknown argument ${argv[i]!}`);
    }
  }
  if (out.builds.length === 0)
    out.builds = [
      { label: 'tsc build', main: join(ROOT, 'dist', 'src', 'cli', 'main.js') },
      { label: 'bundle', main: join(ROOT, BUNDLE_DIR, BUNDLE_ENTRY) },
    ];
  for (const b of out.builds)
    if (!existsSync(b.main)) throw new Error(`${b.main} does not exist (npm run build)`);
  if (!(out.runs >= 1) || !(out.envtestRuns >= 0)) throw new Error('--runs must be ≥ 1, --envtest-runs ≥ 0');
  return out;
}

function cell(xs: readonly number[], digits = 0): string {
  if (xs.length === 0) return '–';
  const f = (n: number): string => n.toFixed(digits);
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

async function serverRun(build: Build, serverArgs: readonly string[], into: Samples): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-startup-'));
  try {
    const server = await spawnServer({ dataDir: join(dir, 'data'), main: build.main, extraArgs: serverArgs });
    try {
      into.firstRequestMs.push(server.firstRequestMs);
      into.readyzMs.push(server.readyMs);
      const ready = readProc(server.pid);
      if (ready !== undefined) into.cpuMs.push(ready.cpuMs);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const early = readProc(server.pid);
      if (early !== undefined) into.earlyRssMiB.push(early.rssBytes / 1024 / 1024);
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Builds the envtest program into `dir`; returns the binary's path. */
async function buildEnvtestProgram(dir: string): Promise<string> {
  const binary = join(dir, 'envtest-compat');
  await run('go', ['build', '-o', binary, '.'], {
    cwd: join(ROOT, 'test', 'fixtures', 'envtest'),
    env: { ...process.env, GOFLAGS: `${process.env['GOFLAGS'] ?? ''} -mod=mod -buildvcs=false`.trim() },
    maxBuffer: 16 << 20,
  });
  return binary;
}

/** One envtest Start()/Stop() pair with `assets` as KUBEBUILDER_ASSETS. */
async function envtestRun(binary: string, assets: string, into: Samples): Promise<void> {
  const { stdout } = await run(binary, ['-timing-runs', '1', '-timing-only'], {
    env: { ...process.env, KUBEBUILDER_ASSETS: assets },
    maxBuffer: 16 << 20,
    timeout: 120_000,
  });
  const line = stdout.split('\n').find((l) => l.includes('"step":"timing"'));
  if (line === undefined) throw new Error(`no timing line from the envtest program:\n${stdout}`);
  const t = JSON.parse(line) as { startMedianMs: number; stopMedianMs: number };
  into.envtestStartMs.push(t.startMedianMs);
  into.envtestStopMs.push(t.stopMedianMs);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const samples = new Map<Build, Samples>(
    args.builds.map((b) => [
      b,
      { firstRequestMs: [], readyzMs: [], cpuMs: [], earlyRssMiB: [], envtestStartMs: [], envtestStopMs: [] },
    ]),
  );
  const extraSamples = new Map<string, Samples>(
    args.extraAssets.map((e) => [
      e.label,
      { firstRequestMs: [], readyzMs: [], cpuMs: [], earlyRssMiB: [], envtestStartMs: [], envtestStopMs: [] },
    ]),
  );
  const log = (s: string): void => void process.stderr.write(`${s}\n`);
  for (let r = 0; r < args.runs; r++) {
    for (const b of r % 2 === 0 ? args.builds : [...args.builds].reverse()) {
      await serverRun(b, args.serverArgs, samples.get(b)!);
      const s = samples.get(b)!;
      log(`run ${r + 1}/${args.runs} ${b.label}: first request ${s.firstRequestMs.at(-1)!.toFixed(0)} ms`);
    }
  }
  if (args.envtestRuns > 0) {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-startup-envtest-'));
    try {
      log('building the envtest program (go build)');
      const binary = await buildEnvtestProgram(dir);
      const assets = new Map<Build, string>();
      for (const [i, b] of args.builds.entries()) {
        const d = join(dir, `assets-${i}`);
        // A build of this checkout: its shims run exactly that entry. Another checkout's build
        // writes its own assets (as its users get them: a before/after comparison of the shims).
        if (b.main.startsWith(`${ROOT}/`)) await writeEnvtestAssets(d, { mainJs: b.main });
        else await run(process.execPath, [b.main, 'envtest-assets', d]);
        assets.set(b, d);
      }
      const timed = [
        ...args.builds.map((b) => ({ label: b.label, dir: assets.get(b)!, into: samples.get(b)! })),
        ...args.extraAssets.map((e) => ({ label: e.label, dir: e.dir, into: extraSamples.get(e.label)! })),
      ];
      for (let r = 0; r < args.envtestRuns; r++) {
        for (const t of r % 2 === 0 ? timed : [...timed].reverse()) {
          await envtestRun(binary, t.dir, t.into);
          log(`envtest ${r + 1}/${args.envtestRuns} ${t.label}: Start() ${t.into.envtestStartMs.at(-1)!} ms`);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  const header = ['build', 'first request ms', '/readyz ms', 'CPU ms at ready', 'RSS 1 s after ready MiB'];
  if (args.envtestRuns > 0) header.push('envtest Start() ms', 'envtest Stop() ms');
  const rows = args.builds.map((b) => {
    const s = samples.get(b)!;
    const row = [b.label, cell(s.firstRequestMs), cell(s.readyzMs), cell(s.cpuMs), cell(s.earlyRssMiB, 1)];
    if (args.envtestRuns > 0) row.push(cell(s.envtestStartMs), cell(s.envtestStopMs));
    return row;
  });
  if (args.envtestRuns > 0)
    for (const e of args.extraAssets) {
      const s = extraSamples.get(e.label)!;
      rows.push([e.label, '–', '–', '–', '–', cell(s.envtestStartMs), cell(s.envtestStopMs)]);
    }
  console.log(
    `capstan server start-up, median (min–max) of ${args.runs} starts per build` +
      (args.envtestRuns > 0 ? `, envtest of ${args.envtestRuns}` : '') +
      `${args.serverArgs.length > 0 ? `, flags ${args.serverArgs.join(' ')}` : ''}`,
  );
  console.log(`| ${header.join(' | ')} |`);
  console.log(`| ${header.map(() => '---').join(' | ')} |`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  for (const b of args.builds) console.log(`${b.label}: ${b.main}`);
  for (const e of args.extraAssets) console.log(`${e.label}: KUBEBUILDER_ASSETS=${e.dir}`);
  if (args.json !== undefined)
    await writeFile(
      args.json,
      `${JSON.stringify(
        [
          ...args.builds.map((b) => ({ label: b.label, main: b.main, ...samples.get(b)! })),
          ...args.extraAssets.map((e) => ({ label: e.label, assets: e.dir, ...extraSamples.get(e.label)! })),
        ],
        null,
        2,
      )}\n`,
    );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
