/**
 * kube's `SetVolumeOwnership` for a pod's `securityContext.fsGroup`: everything in a volume gets
 * the fsGroup as its group; files get group read (and write, unless the volume is read-only):
 * mode | 0440 or | 0660; directories also get group execute and the setgid bit, so files made
 * later inherit the group. Symlinks (the atomic writer's) change group only.
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const SETGID = 0o2000;

/** Applies `fsGroup` to `dir` and everything under it. */
export async function applyFsGroup(dir: string, fsGroup: number, readOnly: boolean): Promise<void> {
  const mask = readOnly ? 0o440 : 0o660;
  const visit = async (path: string): Promise<void> => {
    const st = await lstat(path);
    await lchown(path, -1, fsGroup);
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      await chmod(path, (st.mode & 0o7777) | mask | 0o110 | SETGID);
      for (const name of await readdir(path)) await visit(join(path, name));
      return;
    }
    await chmod(path, (st.mode & 0o7777) | mask);
  };
  await visit(dir);
}
