/**
 * hostPath's `type` checks (pkg/volume/hostpath): before the path is mounted, it must be what the
 * type says; `DirectoryOrCreate` makes a missing directory (0755, parents included) and
 * `FileOrCreate` a missing empty file (0644, its parent must exist). `""` checks nothing.
 */
import { constants } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';

async function statOf(path: string): Promise<Stats | undefined> {
  return stat(path).catch(() => undefined);
}

/** Checks (and for the *OrCreate types, makes) a hostPath; throws with kube's message. */
export async function checkHostPath(path: string, type: string | undefined): Promise<void> {
  const fail = (what: string): never => {
    throw new Error(`hostPath type check failed: ${path} is not a ${what}`);
  };
  let st = await statOf(path);
  switch (type ?? '') {
    case '':
      return;
    case 'DirectoryOrCreate':
      if (!st) {
        await mkdir(path, { recursive: true, mode: 0o755 });
        st = await statOf(path);
      }
      if (!st?.isDirectory()) fail('directory');
      return;
    case 'Directory':
      if (!st?.isDirectory()) fail('directory');
      return;
    case 'FileOrCreate':
      if (!st) {
        const fh = await open(path, constants.O_CREAT | constants.O_WRONLY, 0o644).catch((err: unknown) => {
          throw new Error(`hostPath type check failed: ${path}: ${(err as Error).message}`);
        });
        await fh.close();
        st = await statOf(path);
      }
      if (!st?.isFile()) fail('file');
      return;
    case 'File':
      if (!st?.isFile()) fail('file');
      return;
    case 'Socket':
      if (!st?.isSocket()) fail('socket');
      return;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) fail('character device');
      return;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) fail('block device');
      return;
    default:
      throw new Error(`hostPath type check failed: ${path}: unknown type ${type ?? ''}`);
  }
}
