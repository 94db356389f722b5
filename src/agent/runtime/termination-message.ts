/**
 * A container's termination message, as kubelet reports it in the status of an exited
 * container:
 *
 * - each container gets an empty file of its own on the host (mode 0666, so any user may write
 *   it), mounted at its `terminationMessagePath` (`/dev/termination-log` by default);
 * - once the container exited, the last 4 KiB of that file are the message;
 * - with `terminationMessagePolicy: FallbackToLogsOnError`, a container that failed (exit code
 *   not 0) and left the file empty gets the end of its log instead: its last 80 lines, at most
 *   the last 2 KiB of them;
 * - the message follows the runtime's own, after `": "`.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type * as CRI from '../cri/types.js';
import { TERMINATION_MESSAGE_PATH, TERMINATION_MESSAGE_POLICY } from './labels.js';
import { writeLogs } from './logs.js';

/** kubelet's bounds: the file's last bytes, the log's last lines and bytes. */
const MAX_MESSAGE_BYTES = 4 * 1024;
const MAX_LOG_LINES = 80;
const MAX_LOG_BYTES = 2 * 1024;

/**
 * Makes the host file of one container instance under `containerDir` (kubelet's
 * `<pod dir>/containers/<name>/<random id>`), answers its path.
 */
export async function newTerminationLog(containerDir: string): Promise<string> {
  await mkdir(containerDir, { recursive: true, mode: 0o750 });
  const path = join(containerDir, randomBytes(4).toString('hex'));
  await writeFile(path, '');
  // The mode regardless of the umask: the container's user, whoever it is, writes the file.
  await chmod(path, 0o666);
  return path;
}

/** The last `max` bytes of a file; undefined when it does not exist. */
async function readTail(path: string, max: number): Promise<string | undefined> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const { size } = await file.stat();
    const length = Math.min(size, max);
    const buf = Buffer.alloc(length);
    await file.read(buf, 0, length, size - length);
    return buf.toString('utf8');
  } finally {
    await file.close();
  }
}

/** The end of a container's log for its termination message (kubelet's circular 2 KiB buffer). */
async function logTail(logPath: string): Promise<string> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  try {
    await writeLogs(
      logPath,
      { follow: false, timestamps: false, tailLines: MAX_LOG_LINES },
      sink,
      () => Promise.resolve(false),
      new AbortController().signal,
    );
  } catch (err) {
    return `Error on reading termination message from logs: ${(err as Error).message}`;
  }
  const all = Buffer.concat(chunks);
  return all.subarray(Math.max(0, all.length - MAX_LOG_BYTES)).toString('utf8');
}

/**
 * The message of an exited container's status: the runtime's message, then the termination
 * message (see the module comment). Other states keep the runtime's message.
 */
export async function statusMessage(status: CRI.ContainerStatus): Promise<string> {
  if (status.state !== 'CONTAINER_EXITED') return status.message;
  const path = status.annotations[TERMINATION_MESSAGE_PATH] ?? '';
  const fallback =
    status.annotations[TERMINATION_MESSAGE_POLICY] === 'FallbackToLogsOnError' &&
    status.exitCode !== 0 &&
    status.reason !== 'ContainerCannotRun';
  let message = '';
  let checkLogs = fallback;
  if (path !== '') {
    const mount = (status.mounts ?? []).find((m) => m.containerPath === path);
    if (mount !== undefined) {
      try {
        const data = await readTail(mount.hostPath, MAX_MESSAGE_BYTES);
        message = data ?? '';
        checkLogs = fallback && message === '';
      } catch (err) {
        message = `Error on reading termination log ${mount.hostPath}: ${(err as Error).message}`;
        checkLogs = false;
      }
    }
  }
  if (checkLogs && status.logPath) message = await logTail(status.logPath);
  if (message === '') return status.message;
  return status.message ? `${status.message}: ${message}` : message;
}
