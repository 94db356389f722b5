/**
 * The `certificatesigningrequest-signing-controller` (alias `csrsigning`): see `controller.ts`.
 *
 * Which CA signs for which signer, as kube-controller-manager decides: with
 * `--cluster-signing-cert-file`/`--cluster-signing-key-file` (or the in-process server's own
 * cluster CA, `clusterSigning.ca`) that CA signs for all four kube signers; with any of the
 * per-signer `--cluster-signing-<signer>-{cert,key}-file` flags only the signers named get one.
 * With neither the controller does not run; with both it fails to start.
 */
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { Authority } from './authority.js';
import { CsrSigningController } from './controller.js';
import { SIGNERS } from './validate.js';

/** The per-signer flag infix (`--cluster-signing-<key>-cert-file`) of each signer. */
const SIGNER_FLAGS: readonly (readonly [key: string, signer: string])[] = [
  ['kubelet-serving', SIGNERS.kubeletServing],
  ['kubelet-client', SIGNERS.kubeletClient],
  ['kube-apiserver-client', SIGNERS.kubeAPIServerClient],
  ['legacy-unknown', SIGNERS.legacyUnknown],
];

async function authorities(ctx: ControllerContext): Promise<Map<string, Authority> | undefined> {
  const cs = ctx.config.clusterSigning;
  const specific = SIGNER_FLAGS.some(([key]) => {
    const files = cs.signers[key];
    return files !== undefined && (files.certFile !== '' || files.keyFile !== '');
  });
  const missingSingle = cs.ca === undefined && (cs.certFile === '' || cs.keyFile === '');
  if (missingSingle && !specific) {
    ctx.log.info('Skipping CSR signer controller because no csr cert/key was specified');
    return undefined;
  }
  if (!missingSingle && specific)
    throw new Error('cannot specify default and per controller certs at the same time');
  const out = new Map<string, Authority>();
  if (!specific) {
    const ca =
      cs.ca !== undefined ? new Authority(cs.ca) : await Authority.fromFiles(cs.certFile, cs.keyFile);
    for (const [, signer] of SIGNER_FLAGS) out.set(signer, ca);
    return out;
  }
  for (const [key, signer] of SIGNER_FLAGS) {
    const files = cs.signers[key] ?? { certFile: '', keyFile: '' };
    if (files.certFile === '' && files.keyFile === '') {
      ctx.log.info(
        `Skipping CSR signer controller because specific files were specified for other signers and not this one: ${signer}`,
      );
      continue;
    }
    try {
      out.set(signer, await Authority.fromFiles(files.certFile, files.keyFile));
    } catch (err) {
      throw new Error(`failed to start ${signer} certificate controller: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return out;
}

/** Registry entry. */
export const csrSigningController: ControllerDescriptor = {
  name: 'certificatesigningrequest-signing-controller',
  aliases: ['csrsigning'],
  serviceAccount: 'certificate-controller',
  async start(ctx) {
    const cas = await authorities(ctx);
    if (cas === undefined) return;
    new CsrSigningController(ctx, cas, ctx.config.clusterSigning.durationMs).start();
  },
};
