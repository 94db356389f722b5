/**
 * What a measured server is, for the report's `subject` column: its product and version from
 * `GET /version` (`gitVersion`; Capstan's carries `+capstan` and a `capstan-<version>` gitCommit)
 * and its storage backend, found without asking the server anything it does not already serve:
 *
 * - a server the bench started itself: from the flags it was started with;
 * - a local server: from its command line, the process being found by the port it listens on
 *   (`/proc/net/tcp{,6}` gives the listening socket's inode, `/proc/<pid>/fd` the process holding
 *   it), or named with `--server-pid`;
 * - otherwise the backend is `backend unknown` (a remote server, or one inside another process,
 *   such as a test's in-process server on a memory store).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { BenchClient } from './client.js';

/** The identity of one measured server. */
export interface SubjectIdentity {
  /** `capstan`, `kube-apiserver`, or `server` when /version names neither. */
  readonly product: string;
  /** `gitVersion` of `/version` (`unknown version` when it did not answer). */
  readonly version: string;
  /** `embedded LevelDB`, `etcd`, or `backend unknown`. */
  readonly backend: string;
  /** The server's process on this machine, when found (for CPU and RSS readings). */
  readonly pid: number | undefined;
  /** `<product> <version> (<backend>)`. */
  readonly label: string;
}

/** The fields of `/version` the label uses. */
interface VersionDoc {
  readonly gitVersion?: unknown;
  readonly gitCommit?: unknown;
}

/** Product and version from a `/version` document (undefined: it did not answer one). */
export function productOf(doc: VersionDoc | undefined): { product: string; version: string } {
  const version = typeof doc?.gitVersion === 'string' ? doc.gitVersion : 'unknown version';
  if (doc === undefined) return { product: 'server', version };
  const commit = typeof doc.gitCommit === 'string' ? doc.gitCommit : '';
  if (version.includes('+capstan') || commit.startsWith('capstan-')) return { product: 'capstan', version };
  // kube-apiserver's gitVersion is a bare semantic version (v1.33.13, v1.33.0-rc.1).
  if (/^v\d+\.\d+\.\d+/.test(version)) return { product: 'kube-apiserver', version };
  return { product: 'server', version };
}

/**
 * The storage backend a server process was started with, from its arguments (`argv` after the
 * executable): kube-apiserver always stores in etcd; `capstan server` in etcd with
 * `--etcd-servers`, else in its embedded LevelDB store. Undefined when the arguments are neither.
 */
export function backendOfArgs(argv: readonly string[]): string | undefined {
  const etcd = argv.some((a, i) =>
    a.startsWith('--etcd-servers=') ? a !== '--etcd-servers=' : a === '--etcd-servers' && i + 1 < argv.length,
  );
  const exe = argv[0] ?? '';
  // A renamed build counts too (kube-apiserver-v1.33.13, kube-apiserver-versioned).
  if (/(^|\/)kube-apiserver[^/]*$/.test(exe)) return 'etcd';
  // The CLI as installed (`capstan`), built (`main.js`) or bundled (`dist/bundle/capstan.js`).
  const capstan = argv.some((a) => /(^|\/)(capstan(\.js)?|main\.[jt]s)$/.test(a)) && argv.includes('server');
  if (!capstan) return undefined;
  return etcd ? 'etcd' : 'embedded LevelDB';
}

/** `/proc/<pid>/cmdline` split at NULs; undefined when unreadable. */
function cmdlineOf(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return text.split('\0').filter((s) => s !== '');
  } catch {
    return undefined;
  }
}

/** Inodes of sockets listening on `port` (state 0A in `/proc/net/tcp` and `tcp6`). */
function listeningInodes(port: number): Set<string> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && f[1]?.endsWith(`:${hex}`) && f[9] !== undefined) inodes.add(f[9]);
    }
  }
  return inodes;
}

/**
 * The pid of the local process listening on `port`, among the processes this user may read;
 * undefined when none is found (not local, another user's process, no `/proc`).
 */
export function listeningPid(port: number): number | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m?.[1] !== undefined && inodes.has(m[1])) return Number(pid);
      } catch {
        // fds come and go
      }
    }
  }
  return undefined;
}

/** Where a subject came from, as far as the bench knows. */
export interface SubjectOrigin {
  /** `capstan server` flags, when the bench started the server itself. */
  readonly spawnedArgs?: readonly string[];
  /** The server's pid when known (spawned, or `--server-pid`). */
  readonly pid?: number;
}

async function versionDoc(client: BenchClient): Promise<VersionDoc | undefined> {
  try {
    const res = await client.request('GET', '/version');
    if (res.status !== 200) return undefined;
    const doc = JSON.parse(res.body.toString('utf8')) as unknown;
    return typeof doc === 'object' && doc !== null ? doc : undefined;
  } catch {
    return undefined;
  }
}

/** Identifies the server behind `client` (see the module comment for where each part comes from). */
export async function identifySubject(client: BenchClient, origin: SubjectOrigin): Promise<SubjectIdentity> {
  const { product, version } = productOf(await versionDoc(client));
  let pid = origin.pid;
  let backend: string | undefined;
  if (origin.spawnedArgs !== undefined) backend = backendOfArgs(['capstan', 'server', ...origin.spawnedArgs]);
  else {
    const url = new URL(client.origin);
    // Any 127/8 address is this machine (servers of one control plane take one each).
    const local = /^127\.\d+\.\d+\.\d+$/.test(url.hostname) || ['localhost', '[::1]'].includes(url.hostname);
    const port = Number(url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : url.port);
    const found = pid ?? (local ? listeningPid(port) : undefined);
    const argv = found === undefined ? undefined : cmdlineOf(found);
    backend = argv === undefined ? undefined : backendOfArgs(argv);
    // A pid found by port counts only when it is a server process (not a test runner that
    // hosts an in-process server, whose CPU and memory are the runner's).
    if (pid === undefined && backend !== undefined) pid = found;
  }
  const b = backend ?? 'backend unknown';
  return { product, version, backend: b, pid, label: `${product} ${version} (${b})` };
}
