/**
 * Builds the development images (src/cluster/dev-images.ts) into a directory, as OCI image-layout
 * tarballs for `ctr -n k8s.io images import`.
 *
 * @example
 * ```sh
 * node dist/tools/build-images.js /tmp/images   # writes /tmp/images/pause.tar, busybox.tar
 * ```
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildImages } from '../src/cluster/dev-images.js';

export { buildImages, type BuiltImage } from '../src/cluster/dev-images.js';

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? join(process.cwd(), 'images');
  buildImages(out).then(
    (imgs) => {
      for (const i of imgs) console.log(`${i.ref}\t${i.path}\t${i.manifestDigest}`);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
