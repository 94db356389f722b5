/**
 * `capstan images`: the images of `capstan cluster`'s node, without a registry.
 *
 *   capstan images import [--data-dir=DIR] FILE.tar...   OCI image layout or `docker save` tarballs
 *   capstan images ls [--data-dir=DIR]                    the node's image references
 *
 * Imports go into the cluster's own containerd (the `k8s.io` namespace the CRI plugin reads)
 * through Debian's `ctr` on Capstan's socket (`<data-dir>/containerd/containerd.sock`); pods then
 * name the images the tarball carries (`io.containerd.image.name` or the docker tag). When the
 * cluster is not running, the tarballs are copied into `<data-dir>/images/`, which the cluster
 * imports at its next start (as k3s imports its airgap images). `--data-dir` defaults to
 * `.capstan`, as for `capstan cluster`.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { CommandIo } from '../server/run.js';
import { CTR_BIN, containerdLayout, servesCri } from './containerd.js';
import { CRI_NAMESPACE, importImage, type Ctr } from './images.js';
import { nodeLayout } from './node-state.js';

const run = promisify(execFile);

const USAGE = `usage:
  capstan images import [--data-dir=DIR] FILE.tar...   import OCI or docker-archive tarballs into the node
  capstan images ls [--data-dir=DIR]                    list the node's images
--data-dir defaults to .capstan (as for capstan cluster).`;

const PROCESS_IO: CommandIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

function parse(argv: readonly string[]): { dataDir: string; rest: string[] } {
  let dataDir = '.capstan';
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg.startsWith('--data-dir=')) dataDir = arg.slice('--data-dir='.length);
    else if (arg === '--data-dir') dataDir = argv[++i] ?? '';
    else rest.push(arg);
  }
  return { dataDir: resolve(dataDir), rest };
}

/** Runs `capstan images <argv>`; resolves with the exit status. */
export async function runImagesCommand(argv: readonly string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const [verb, ...tail] = argv;
  const { dataDir, rest } = parse(tail);
  if (verb !== 'import' && verb !== 'ls') {
    (verb === undefined || verb === '--help' || verb === '-h' ? io.out : io.err)(USAGE);
    return verb === undefined || verb === '--help' || verb === '-h' ? 0 : 2;
  }
  const layout = nodeLayout(dataDir);
  const socket = containerdLayout(layout.containerdDir).socket;
  const ctr: Ctr = async (...args) => (await run(CTR_BIN, ['-a', socket, ...args])).stdout;
  const running = await servesCri(socket);
  if (verb === 'ls') {
    if (!running) {
      io.err(`Error: no cluster is running on ${dataDir} (start it with tools/run.sh or capstan cluster)`);
      return 1;
    }
    io.out((await ctr('-n', CRI_NAMESPACE, 'images', 'ls', '-q')).trimEnd());
    return 0;
  }
  if (rest.length === 0) {
    io.err(USAGE);
    return 2;
  }
  let status = 0;
  for (const file of rest) {
    try {
      if (!(await stat(file)).isFile()) throw new Error('not a file');
      if (running) {
        const names = await importImage(ctr, resolve(file));
        io.out(`imported ${file}: ${names.join(', ') || '(no named image)'}`);
      } else {
        await mkdir(layout.imagesDir, { recursive: true });
        const target = join(
          layout.imagesDir,
          basename(file).endsWith('.tar') ? basename(file) : `${basename(file)}.tar`,
        );
        await copyFile(file, target);
        io.out(
          `no cluster is running on ${dataDir}: copied ${file} to ${target}, imported at the next start`,
        );
      }
    } catch (err) {
      io.err(`Error: ${file}: ${err instanceof Error ? err.message : String(err)}`);
      status = 1;
    }
  }
  return status;
}
