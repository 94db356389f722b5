/**
 * kube's AtomicWriter (pkg/volume/util/atomic_writer.go): a volume's files change all at once,
 * so a reader sees either the old set or the new set, never a mix.
 *
 * Layout of a target directory:
 * ```
 * ..2026_12_02_03_23_18.123456789/   the current payload (a timestamped directory)
 * ..data -> ..2026_12_02_03_23_18.123456789
 * key -> ..data/key                    one symlink per top-level path of the payload
 * ```
 * A write that changes nothing (same paths, bytes and modes) does nothing. Otherwise the new
 * payload goes to a fresh timestamped directory, `..data_tmp` is made pointing to it and renamed
 * over `..data` (the atomic step), the user-visible symlinks are added for new paths, the old
 * directory is removed and paths no longer in the payload are unlinked.
 */
import { randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';

/** One file of a payload. */
export interface FileProjection {
  readonly data: Buffer;
  /** Permission bits (e.g. 0o644). */
  readonly mode: number;
}

/** Relative path → content. */
export type Payload = Map<string, FileProjection>;

const DATA = '..data';
const DATA_TMP = '..data_tmp';

/** Checks a payload path as kube does: relative, no `..` element, not starting with `..`. */
export function validatePath(path: string): string | undefined {
  if (path === '') return 'invalid path: must not be empty';
  if (path.startsWith('/')) return `invalid path: must be relative path: ${path}`;
  if (path.split('/').includes('..')) return `invalid path: must not contain '..': ${path}`;
  if (path.startsWith('..')) return `invalid path: must not start with '..': ${path}`;
  if (path.length > 4096) return `invalid path: must be less than or equal to 4096 characters`;
  return undefined;
}

function timestampDirName(now: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const stamp = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(5).toString('hex')}`;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** True when the directory under `..data` holds exactly `payload`. */
async function unchanged(target: string, payload: Payload): Promise<boolean> {
  const dataDir = join(target, DATA);
  if (!(await exists(dataDir))) return false;
  const onDisk = new Set<string>();
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dataDir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else onDisk.add(p);
    }
  };
  await walk('');
  if (onDisk.size !== payload.size) return false;
  for (const [path, file] of payload) {
    if (!onDisk.has(path)) return false;
    const full = join(dataDir, path);
    const [st, data] = await Promise.all([stat(full), readFile(full)]);
    if ((st.mode & 0o777) !== (file.mode & 0o777) || !data.equals(file.data)) return false;
  }
  for (const top of topLevel(payload)) if (!(await exists(join(target, top)))) return false;
  return true;
}

function topLevel(payload: Payload): Set<string> {
  return new Set([...payload.keys()].map((p) => p.split('/')[0] ?? p));
}

/**
 * Writes `payload` into `target` atomically; answers true when anything changed. Throws on a
 * path kube refuses (see {@link validatePath}).
 */
export async function writeAtomic(target: string, payload: Payload, now = new Date()): Promise<boolean> {
  const clean: Payload = new Map();
  for (const [path, file] of payload) {
    const bad = validatePath(path);
    if (bad) throw new Error(bad);
    clean.set(normalize(path).split(sep).join('/'), file);
  }
  await mkdir(target, { recursive: true });
  if (await unchanged(target, clean)) return false;
  const oldTs = await readlink(join(target, DATA)).catch(() => undefined);
  const oldVisible = new Set<string>();
  if (oldTs) {
    for (const e of await readdir(join(target, oldTs)).catch(() => [] as string[])) oldVisible.add(e);
  }
  const tsName = timestampDirName(now);
  const tsDir = join(target, tsName);
  await mkdir(tsDir, { mode: 0o755 });
  await chmod(tsDir, 0o755);
  for (const [path, file] of clean) {
    const full = join(tsDir, path);
    await mkdir(dirname(full), { recursive: true, mode: 0o755 });
    await writeFile(full, file.data, { mode: file.mode });
    await chmod(full, file.mode & 0o7777);
  }
  const tmp = join(target, DATA_TMP);
  await rm(tmp, { force: true });
  await symlink(tsName, tmp);
  await rename(tmp, join(target, DATA));
  const visible = topLevel(clean);
  for (const top of visible) {
    const link = join(target, top);
    if (!(await exists(link))) await symlink(join(DATA, top), link);
  }
  if (oldTs && oldTs !== tsName) await rm(join(target, oldTs), { recursive: true, force: true });
  for (const old of oldVisible) {
    if (!visible.has(old)) await unlink(join(target, old)).catch(() => undefined);
  }
  return true;
}
