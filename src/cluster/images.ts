/**
 * Images without a registry, for Capstan's containerd: importing image tarballs (OCI image layout
 * or `docker save` archives) into the CRI plugin's `k8s.io` namespace with Debian's `ctr`
 * (`ctr -a <Capstan's socket> -n k8s.io images import FILE`, which unpacks them for the overlayfs
 * snapshotter), the development images when they are absent, and the data dir's `images/`
 * directory at start, as k3s imports its airgap images. A file is imported again only when its
 * size or modification time changed (the record is `images/.imported.json`), so a second start
 * costs nothing.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriClient } from '../agent/cri/client.js';
import { IMAGE_SPECS, buildImages } from './dev-images.js';

/** The containerd namespace of the CRI plugin. */
export const CRI_NAMESPACE = 'k8s.io';
const RECORD = '.imported.json';

/** Runs `ctr -a <socket> ...args`; resolves with stdout. */
export type Ctr = (...args: string[]) => Promise<string>;

/**
 * Imports one tarball; resolves with the names of the images it held (from `ctr`'s
 * `unpacking <name> (<digest>)...done` lines).
 * @throws Error naming the file with `ctr`'s message.
 */
export async function importImage(ctr: Ctr, file: string): Promise<string[]> {
  let out: string;
  try {
    out = await ctr('-n', CRI_NAMESPACE, 'images', 'import', file);
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`importing ${file}: ${(e.stderr ?? '').trim() || e.message}`);
  }
  const names: string[] = [];
  for (const line of out.split('\n')) {
    const m = /^unpacking (\S+) \(/.exec(line.trim());
    if (m?.[1]) names.push(m[1]);
  }
  return names;
}

/**
 * Builds and imports the development images (pause and busybox) when the runtime lacks either.
 * Resolves with the references it imported (none when both were there).
 */
export async function ensureDevImages(socket: string, ctr: Ctr): Promise<string[]> {
  const cri = new CriClient(`unix://${socket}`);
  let have: Set<string>;
  try {
    have = new Set((await cri.listImages()).flatMap((i) => i.repoTags));
  } finally {
    cri.close();
  }
  const missing = IMAGE_SPECS.filter((s) => !have.has(s.ref));
  if (missing.length === 0) return [];
  const work = await mkdtemp(join(tmpdir(), 'capstan-dev-images-'));
  try {
    const built = await buildImages(work);
    for (const img of built) {
      if (missing.some((m) => m.ref === img.ref)) await importImage(ctr, img.path);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return missing.map((m) => m.ref);
}

type ImportRecord = Record<string, string>;

/**
 * Imports every `*.tar` of `dir` that is new or changed since its last import. Resolves with the
 * files imported; a file that fails is reported through `warn` and tried again next start.
 */
export async function importImagesDir(
  ctr: Ctr,
  dir: string,
  warn: (line: string) => void,
): Promise<string[]> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.tar')).sort();
  } catch {
    return []; // no images/ directory
  }
  const recordPath = join(dir, RECORD);
  const record = JSON.parse(await readFile(recordPath, 'utf8').catch(() => '{}')) as ImportRecord;
  const imported: string[] = [];
  const next: ImportRecord = {};
  for (const f of files) {
    const st = await stat(join(dir, f));
    const key = `${st.size}:${st.mtimeMs}`;
    if (record[f] === key) {
      next[f] = key;
      continue;
    }
    try {
      await importImage(ctr, join(dir, f));
      next[f] = key;
      imported.push(f);
    } catch (err) {
      warn(`images: ${(err as Error).message}`);
    }
  }
  if (JSON.stringify(next) !== JSON.stringify(record)) await writeFile(recordPath, JSON.stringify(next));
  return imported;
}
