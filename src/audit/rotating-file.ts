/**
 * An append-only log file that rotates as lumberjack (the writer behind kube's audit log) does:
 * a write that would take the file past `maxSizeBytes` first renames it to
 * `<name>-<timestamp><ext>` (UTC, `2006-01-02T15-04-05.000`) and starts a new file; then old
 * backups beyond `maxBackups` (0: all kept) or older than `maxAgeDays` (0: no limit) are removed,
 * and the rest gzip-compressed (`.gz`) when `compress` is set. A single write larger than the
 * limit is refused, as lumberjack refuses it.
 *
 * {@link RotatingFile.write} is synchronous: the blocking modes must know whether the event
 * reached the file before the request goes on. Batch mode uses {@link RotatingFile.writeAsync},
 * whose writes run on libuv's thread pool, one after another.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  write as writeFd,
  writeSync,
} from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Rotation settings (kube's `--audit-log-max*` and `--audit-log-compress`). */
export interface RotationOptions {
  /** 0: no rotation. */
  readonly maxSizeBytes: number;
  readonly maxBackups: number;
  readonly maxAgeDays: number;
  readonly compress: boolean;
}

const BACKUP_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/;

function backupStamp(d: Date): string {
  return d.toISOString().replace(/:/g, '-').slice(0, -1);
}

/** See the module comment. */
export class RotatingFile {
  readonly #path: string;
  readonly #options: RotationOptions;
  #fd: number | undefined;
  #size = 0;
  /** The last background write (each starts after the one before it). */
  #tail: Promise<void> = Promise.resolve();

  /** Creates the directory (0700) and the file (0600) when missing; throws when it cannot. */
  constructor(path: string, options: RotationOptions) {
    this.#path = path;
    this.#options = options;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.#open();
  }

  #open(): void {
    this.#fd = openSync(this.#path, 'a', 0o600);
    this.#size = fstatSync(this.#fd).size;
  }

  /** Appends `data` (rotating first when it would not fit); throws on failure. */
  write(data: Buffer): void {
    writeSync(this.#reserve(data.length), data);
  }

  /** {@link write} off the event loop; rejects on failure (later writes still run). */
  writeAsync(data: Buffer): Promise<void> {
    const run = (): Promise<void> =>
      new Promise((resolve, reject) => {
        writeFd(this.#reserve(data.length), data, (err) => (err === null ? resolve() : reject(err)));
      });
    const next = this.#tail.then(run, run);
    this.#tail = next.catch(() => undefined);
    return next;
  }

  /**
   * The file descriptor to append `bytes` to, rotating first when they would not fit, with the
   * bytes counted as written; throws for a write larger than the limit (as lumberjack does).
   */
  #reserve(bytes: number): number {
    const max = this.#options.maxSizeBytes;
    if (max > 0 && bytes > max) throw new Error(`write length ${bytes} exceeds maximum file size ${max}`);
    if (this.#fd === undefined) this.#open();
    if (max > 0 && this.#size + bytes > max) this.#rotate();
    this.#size += bytes;
    return this.#fd as number;
  }

  #rotate(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    const ext = extname(this.#path);
    const stem = basename(this.#path, ext);
    let target = join(dirname(this.#path), `${stem}-${backupStamp(new Date())}${ext}`);
    // Two rotations in one millisecond: keep both.
    for (let i = 1; existsSync(target); i++)
      target = join(dirname(this.#path), `${stem}-${backupStamp(new Date(Date.now() + i))}${ext}`);
    renameSync(this.#path, target);
    this.#open();
    this.#mill(stem, ext);
  }

  /** Removes and compresses old backups (lumberjack's `millRunOnce`). */
  #mill(stem: string, ext: string): void {
    const dir = dirname(this.#path);
    const backups: { name: string; time: number }[] = [];
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(`${stem}-`)) continue;
      const rest = name.slice(stem.length + 1);
      const core = rest.endsWith(`${ext}.gz`)
        ? rest.slice(0, -(ext.length + 3))
        : rest.endsWith(ext)
          ? rest.slice(0, rest.length - ext.length)
          : undefined;
      const m = core === undefined ? null : BACKUP_TIME.exec(core);
      if (m === null) continue;
      const time = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`);
      backups.push({ name, time });
    }
    backups.sort((a, b) => b.time - a.time);
    let keep = backups;
    const remove: string[] = [];
    if (this.#options.maxBackups > 0 && keep.length > this.#options.maxBackups) {
      remove.push(...keep.slice(this.#options.maxBackups).map((b) => b.name));
      keep = keep.slice(0, this.#options.maxBackups);
    }
    if (this.#options.maxAgeDays > 0) {
      const cutoff = Date.now() - this.#options.maxAgeDays * 24 * 3600 * 1000;
      remove.push(...keep.filter((b) => b.time < cutoff).map((b) => b.name));
      keep = keep.filter((b) => b.time >= cutoff);
    }
    for (const name of remove) unlinkQuiet(join(dir, name));
    if (this.#options.compress) {
      for (const b of keep) {
        if (b.name.endsWith('.gz')) continue;
        const from = join(dir, b.name);
        writeFileSync(`${from}.gz`, gzipSync(readFileSync(from)), { mode: 0o600 });
        unlinkQuiet(from);
      }
    }
  }

  /** Closes the file. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
