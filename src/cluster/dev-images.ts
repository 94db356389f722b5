/**
 * The development images, built without a registry: OCI image-layout tarballs made from the
 * machine's `/bin/busybox` (Debian's busybox-static) and its applet links, ready for
 * `ctr -n k8s.io images import`. `capstan cluster` imports them into its containerd when they are
 * absent; the agent's tests do the same into theirs.
 *
 * One gzip layer (busybox, its applet symlinks, `/etc/passwd`, `/etc/group` and the usual empty
 * directories) serves every image; the images differ only in their config ({@link IMAGE_SPECS}):
 * - `docker.io/capstan/pause:3.10`: `Entrypoint ["/bin/sleep", "infinity"]`, the sandbox image;
 * - `docker.io/capstan/busybox:1`: `Cmd ["sh"]`, for pods.
 *
 * The build is reproducible: entries sorted, owned by 0:0, mtime 0, gzip without a name or time.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile, copyFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Where the busybox binary comes from (busybox-static); override with `CAPSTAN_BUSYBOX`. */
export const BUSYBOX = process.env['CAPSTAN_BUSYBOX'] ?? '/bin/busybox';

/** One image to build: its file name, its reference and its OCI config's `config` part. */
export interface ImageSpec {
  /** File name of the tarball, without `.tar`. */
  readonly file: string;
  /** Full reference, as the CRI plugin names it (`docker.io/...`). */
  readonly ref: string;
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
}

/** A built image: its tarball and the digest of its manifest. */
export interface BuiltImage extends ImageSpec {
  readonly path: string;
  readonly manifestDigest: string;
}

/** The sandbox ("pause") image: busybox sleeping forever. */
export const PAUSE_IMAGE = 'docker.io/capstan/pause:3.10';
/** The busybox image for pods and tests (`Cmd ["sh"]`). */
export const BUSYBOX_IMAGE = 'docker.io/capstan/busybox:1';

/** The images {@link buildImages} builds. */
export const IMAGE_SPECS: readonly ImageSpec[] = [
  { file: 'pause', ref: PAUSE_IMAGE, entrypoint: ['/bin/sleep', 'infinity'] },
  { file: 'busybox', ref: BUSYBOX_IMAGE, cmd: ['sh'] },
];

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';
const EMPTY_DIRS = [
  'dev',
  'proc',
  'sys',
  'tmp',
  'root',
  'var',
  'etc',
  'home',
  'run',
  'usr/bin',
  'usr/sbin',
  'sbin',
  'bin',
];

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function goArch(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch;
}

/** Builds the busybox root filesystem as an uncompressed tar. */
async function buildRootfsTar(work: string): Promise<Buffer> {
  if (!existsSync(BUSYBOX)) throw new Error(`build-images: ${BUSYBOX} is missing (install busybox-static)`);
  const root = join(work, 'rootfs');
  for (const d of EMPTY_DIRS) await mkdir(join(root, d), { recursive: true });
  await chmod(join(root, 'tmp'), 0o1777);
  await copyFile(BUSYBOX, join(root, 'bin/busybox'));
  await chmod(join(root, 'bin/busybox'), 0o755);
  const applets = execFileSync(BUSYBOX, ['--list-full'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const applet of applets) {
    if (applet === 'bin/busybox') continue;
    const target = join(root, applet);
    await mkdir(dirname(target), { recursive: true });
    if (!existsSync(target)) await symlink('/bin/busybox', target);
  }
  await writeFile(
    join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n',
  );
  await writeFile(join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
  const tarPath = join(work, 'layer.tar');
  execFileSync('tar', [
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-C',
    root,
    '-cf',
    tarPath,
    '.',
  ]);
  return readFileSync(tarPath);
}

/**
 * Builds every image of the fixture into `outDir` (`<file>.tar` each) and returns them.
 * Throws with the failing step when busybox or `tar` is missing.
 */
export async function buildImages(outDir: string): Promise<BuiltImage[]> {
  await mkdir(outDir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'capstan-images-'));
  try {
    const layerTar = await buildRootfsTar(work);
    const layer = gzipSync(layerTar, { level: 6 });
    const built: BuiltImage[] = [];
    for (const spec of IMAGE_SPECS) {
      const dir = join(work, spec.file);
      const blobs = join(dir, 'blobs/sha256');
      await mkdir(blobs, { recursive: true });
      const put = async (data: Buffer | string): Promise<{ digest: string; size: number }> => {
        const buf = typeof data === 'string' ? Buffer.from(data) : data;
        const hex = sha256(buf);
        await writeFile(join(blobs, hex), buf);
        return { digest: `sha256:${hex}`, size: buf.length };
      };
      const layerBlob = await put(layer);
      const config = {
        architecture: goArch(),
        os: 'linux',
        created: '1970-01-01T00:00:00Z',
        config: {
          Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
          WorkingDir: '/',
          ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
          ...(spec.cmd ? { Cmd: spec.cmd } : {}),
        },
        rootfs: { type: 'layers', diff_ids: [`sha256:${sha256(layerTar)}`] },
        history: [{ created: '1970-01-01T00:00:00Z', created_by: 'capstan src/cluster/dev-images.ts' }],
      };
      const configBlob = await put(JSON.stringify(config));
      const manifest = {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, ...configBlob },
        layers: [{ mediaType: OCI_LAYER, ...layerBlob }],
      };
      const manifestBlob = await put(JSON.stringify(manifest));
      const tag = spec.ref.slice(spec.ref.lastIndexOf(':') + 1);
      const index = {
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          {
            mediaType: OCI_MANIFEST,
            ...manifestBlob,
            annotations: { 'io.containerd.image.name': spec.ref, 'org.opencontainers.image.ref.name': tag },
          },
        ],
      };
      await writeFile(join(dir, 'index.json'), JSON.stringify(index));
      await writeFile(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
      const path = join(outDir, `${spec.file}.tar`);
      execFileSync('tar', [
        '--sort=name',
        '--mtime=@0',
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        '-C',
        dir,
        '-cf',
        path,
        'oci-layout',
        'index.json',
        'blobs',
      ]);
      built.push({ ...spec, path, manifestDigest: manifestBlob.digest });
    }
    return built;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
