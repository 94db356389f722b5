/**
 * The memory-backed directories the agent mounts (emptyDir `medium: Memory`, and, as kubelet
 * does, the tmpfs under every secret and projected volume), and the only mounts it ever removes.
 *
 * Each tmpfs the agent mounts is recorded in `<pod dir>/tmpfs-mounts` (one path a line) before
 * the mount is made. Teardown unmounts the recorded paths that are still mount points and
 * nothing else: a mount someone else made under a pod directory is reported and left, and the
 * pod directory then stays too.
 */
import { execFile } from 'node:child_process';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const RECORD = 'tmpfs-mounts';

/** kube's mountinfo escapes (`\040` for a space...). */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The mount points of this process's mount namespace (`/proc/self/mountinfo`, field 5). */
export async function mountPoints(): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    if (f[4]) out.push(unescapeMountPath(f[4]));
  }
  return out;
}

/** True when `path` is a mount point now. */
export async function isMountPoint(path: string): Promise<boolean> {
  return (await mountPoints()).includes(path);
}

/** The tmpfs paths the agent recorded for a pod. */
export async function recordedMounts(podDir: string): Promise<Set<string>> {
  const text = await readFile(join(podDir, RECORD), 'utf8').catch(() => '');
  return new Set(text.split('\n').filter(Boolean));
}

/** Mounts a tmpfs at `path` (an existing directory) unless it is one already. */
export async function mountTmpfs(podDir: string, path: string, sizeBytes?: number): Promise<void> {
  if (await isMountPoint(path)) return;
  if (!(await recordedMounts(podDir)).has(path)) await appendFile(join(podDir, RECORD), `${path}\n`);
  const opts = sizeBytes && sizeBytes > 0 ? ['-o', `size=${Math.floor(sizeBytes)}`] : [];
  try {
    await run('mount', ['-t', 'tmpfs', ...opts, 'tmpfs', path]);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`mount failed: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}

/**
 * Unmounts the agent's tmpfs mounts of a pod. Answers the mount points left under the pod
 * directory that the agent did not make (empty when the directory is free of mounts).
 */
export async function unmountPod(podDir: string): Promise<string[]> {
  const mine = await recordedMounts(podDir);
  const under = (await mountPoints()).filter((p) => p === podDir || p.startsWith(`${podDir}/`));
  const foreign: string[] = [];
  // Deepest first, so nested mounts go before their parents.
  for (const p of [...new Set(under)].sort((a, b) => b.length - a.length)) {
    if (!mine.has(p)) {
      foreign.push(p);
      continue;
    }
    await run('umount', [p]);
  }
  return foreign;
}
