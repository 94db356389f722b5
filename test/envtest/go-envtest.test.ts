/**
 * The envtest compatibility program (issue 19 item 5): `test/fixtures/envtest` is a Go program using
 * controller-runtime v0.21's envtest exactly as a controller project's suite does. It is built here
 * with the Go module proxy (GOFLAGS=-mod=mod, into a temp dir; the first build takes minutes, later
 * ones reuse Go's build cache) and run against `capstan envtest-assets` output: envtest starts the
 * shims, installs the Widget CRD from a directory, a manager's reconciler sets the status of 50
 * Widgets, the program waits for all of them, checks that a fresh namespace holds exactly the
 * objects it made there and that deleting it leaves it Terminating (no controllers, as a bare
 * kube-apiserver; with CAPSTAN_ENVTEST_CONTROLLERS=namespace it must go away), and stops the
 * environment. Run on the in-memory store
 * and on envtest's real etcd (`CAPSTAN_ENVTEST_ETCD=1`), where the program also counts the Widgets'
 * keys under `/registry` in that etcd. Without `go` the tests are skipped with a warning, except
 * under `CI=true`, where they fail.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROLLERS_ENV, REAL_ETCD_ENV, writeEnvtestAssets } from '../../src/envtest/assets.js';

const run = promisify(execFile);
// The bundle: what tools/run.sh and `capstan envtest-assets` run (npm run build makes it).
const MAIN = resolve(import.meta.dirname, '../../dist/bundle/capstan.js');
const PROGRAM = resolve(import.meta.dirname, '../fixtures/envtest');
const CI = process.env['CI'] === 'true';
/** envtest Start()/Stop() pairs timed before the controller run (medians printed, not asserted). */
const TIMING_RUNS = 3;

function goVersion(): string | undefined {
  try {
    return execFileSync('go', ['version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

const haveGo = goVersion() !== undefined;
if (!haveGo && !CI) console.warn('go-envtest.test.ts: `go` is not on PATH: skipped (fails under CI=true)');

let root: string;
let assets: string;
let binary: string;

interface Step {
  readonly step: string;
  readonly [key: string]: unknown;
}

/** Runs the built program and parses its JSON lines; rejects with its output when it fails. */
async function runProgram(args: string[], env: Record<string, string>): Promise<Step[]> {
  try {
    const { stdout } = await run(binary, ['-crd-dir', join(PROGRAM, 'crd'), ...args], {
      env: { ...process.env, KUBEBUILDER_ASSETS: assets, ...env },
      maxBuffer: 16 << 20,
      timeout: 240_000,
    });
    return stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Step);
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${e.message}\nstdout:\n${e.stdout ?? ''}\nstderr:\n${(e.stderr ?? '').slice(-8000)}`);
  }
}

function find(steps: Step[], name: string): Step {
  const s = steps.find((x) => x.step === name);
  expect(s, `no ${name} step in ${JSON.stringify(steps)}`).toBeDefined();
  return s as Step;
}

describe.runIf(haveGo || CI)(
  'controller-runtime v0.21 envtest program against capstan envtest-assets',
  () => {
    beforeAll(async () => {
      expect(haveGo, '`go` is not on PATH (required under CI=true)').toBe(true);
      expect(existsSync(MAIN), `${MAIN} missing: run npm run build`).toBe(true);
      root = await mkdtemp(join(tmpdir(), 'capstan-go-envtest-'));
      assets = join(root, 'assets');
      binary = join(root, 'envtest-compat');
      await writeEnvtestAssets(assets, { mainJs: MAIN });
      const t0 = performance.now();
      await run('go', ['build', '-o', binary, '.'], {
        cwd: PROGRAM,
        // -buildvcs=false: the program sits inside Capstan's git tree (worktrees included).
        env: { ...process.env, GOFLAGS: `${process.env['GOFLAGS'] ?? ''} -mod=mod -buildvcs=false`.trim() },
        maxBuffer: 16 << 20,
      });
      console.log(`go build of the envtest program: ${Math.round(performance.now() - t0)} ms`);
    }, 900_000);

    afterAll(async () => {
      if (root !== undefined) await rm(root, { recursive: true, force: true });
    });

    it('in-memory store: CRD installed from a directory, 50 Widgets reconciled by a manager', async () => {
      const steps = await runProgram(['-objects', '50', '-timing-runs', String(TIMING_RUNS)], {});
      expect(find(steps, 'start')['crds']).toBe(1);
      expect(find(steps, 'reconciled')['objects']).toBe(50);
      // A bare kube-apiserver: a fresh namespace holds exactly what the program made there.
      expect(find(steps, 'fresh-namespace')).toMatchObject({
        empty: { configmaps: 0, secrets: 0, serviceaccounts: 0 },
        filled: { configmaps: 50, secrets: 0, serviceaccounts: 0 },
      });
      expect(find(steps, 'namespace-deletion')['gone']).toBe(false);
      find(steps, 'done');
      const timing = find(steps, 'timing');
      console.log(
        `envtest Start()/Stop() with Capstan's assets, median of ${TIMING_RUNS}: start ${String(timing['startMedianMs'])} ms, stop ${String(timing['stopMedianMs'])} ms`,
      );
    }, 300_000);

    it('namespace deletion as an opt-in: CAPSTAN_ENVTEST_CONTROLLERS=namespace', async () => {
      const steps = await runProgram(['-objects', '50', '-expect-namespace-deletion'], {
        [CONTROLLERS_ENV]: 'namespace',
      });
      // Only the namespace controller: still no ServiceAccount or root CA ConfigMap.
      expect(find(steps, 'fresh-namespace')).toMatchObject({
        empty: { configmaps: 0, secrets: 0, serviceaccounts: 0 },
      });
      expect(find(steps, 'namespace-deletion')['gone']).toBe(true);
      find(steps, 'done');
    }, 300_000);

    it("envtest's real etcd: the Widgets are stored in it under /registry", async () => {
      const steps = await runProgram(['-objects', '50', '-check-etcd'], { [REAL_ETCD_ENV]: '1' });
      expect(find(steps, 'reconciled')['objects']).toBe(50);
      expect(find(steps, 'etcd')['count']).toBe('50');
      find(steps, 'done');
    }, 300_000);
  },
);
