/**
 * The test helpers run an `exec` again when kubectl says its own stream race voided the result
 * (kubernetes#131189), and nothing else. A stand-in `kubectl.1.33` script plays the client: it
 * prints the race's log line on the runs listed in a file.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

let dir: string;
let kubectl: typeof import('../support/kubectl.js');

/** The script: counts its runs in `runs`, fails with the race's output on those in `racy`. */
const SCRIPT = `#!/bin/sh
n=$(( $(cat "$D/runs" 2>/dev/null || echo 0) + 1 ))
echo $n > "$D/runs"
if grep -qx "$n" "$D/racy"; then
  echo 'E1205 06:30:20.715782   15313 websocket.go:297] Unknown stream id 1, discarding message' >&2
  echo 'error: closed all streams' >&2
  exit 1
fi
case " $* " in *" -i "*) cat > "$D/stdin" ;; esac
echo "run $n"
exit 3
`;

function setUp(racyRuns: number[]): void {
  rmSync(join(dir, 'runs'), { force: true });
  writeFileSync(join(dir, 'racy'), racyRuns.map((n) => `${n}\n`).join(''));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-exec-race-'));
  writeFileSync(join(dir, 'kubectl.1.33'), SCRIPT);
  chmodSync(join(dir, 'kubectl.1.33'), 0o755);
  vi.stubEnv('CAPSTAN_KUBECTL_DIR', dir);
  vi.stubEnv('D', dir);
  vi.resetModules();
  kubectl = await import('../support/kubectl.js');
});

afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl exec client race', () => {
  it('runs a voided exec again, and returns the first real result', async () => {
    setUp([1]);
    const res = await kubectl.runKubectl('1.33', ['exec', 'p', '--', 'true'], join(dir, 'kubeconfig'));
    expect(res).toMatchObject({ code: 3, stdout: 'run 2\n', runs: 2 });
  });

  it('feeds the same input to the run again', async () => {
    setUp([1]);
    const res = await kubectl.runKubectlWith(
      '1.33',
      ['exec', '-i', 'p', '--', 'cat'],
      join(dir, 'kubeconfig'),
      {
        input: 'in',
      },
    );
    expect(res).toMatchObject({ code: 3, runs: 2 });
    expect(readFileSync(join(dir, 'stdin'), 'utf8')).toBe('in');
  });

  it('gives up after three voided runs, with the last one', async () => {
    setUp([1, 2, 3, 4]);
    const res = await kubectl.runKubectl('1.33', ['exec', 'p', '--', 'true'], join(dir, 'kubeconfig'));
    expect(res).toMatchObject({ code: 1, runs: 3 });
    expect(res.stderr).toContain('closed all streams');
  });

  it('never runs anything but exec again', async () => {
    setUp([1]);
    const res = await kubectl.runKubectl('1.33', ['attach', 'p'], join(dir, 'kubeconfig'));
    expect(res).toMatchObject({ code: 1, runs: 1 });
  });
});
