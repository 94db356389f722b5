/**
 * The API server's client certificate for the node agent in `capstan cluster`: the cert dir's
 * kubeadm-style kubelet client pair (issued by `ensureServerPki`, see its `kubeletClient` option),
 * signed by the cluster CA, which the agent trusts as its `--client-ca-file`. The server gets the
 * pair as `--kubelet-client-certificate`/`--kubelet-client-key`; the agent authorizes its requests
 * through SubjectAccessReviews.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { KUBELET_CLIENT_BASE, ensureServerPki } from '../pki/server-pki.js';
import type { ServerOptions } from '../server/options.js';
import { serverPkiOptions } from '../server/server.js';

/** The files the server and the agent are started with. */
export interface KubeletClientFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The cluster CA, for the agent's `--client-ca-file`. */
  readonly clientCAFile: string;
}

/**
 * Makes sure the server's PKI exists with the kubelet client pair (the server reuses both when it
 * starts), and writes the CA to `clientCAFile` for the agent.
 * @throws PkiError for unusable certificate files (as the server would).
 */
export async function ensureKubeletClientPki(
  options: ServerOptions,
  clientCAFile: string,
): Promise<KubeletClientFiles> {
  const pki = await ensureServerPki({ ...serverPkiOptions(options), kubeletClient: true });
  await mkdir(dirname(clientCAFile), { recursive: true });
  await writeFile(clientCAFile, pki.ca.certPem, { mode: 0o644 });
  return {
    certFile: join(options.certDir, `${KUBELET_CLIENT_BASE}.crt`),
    keyFile: join(options.certDir, `${KUBELET_CLIENT_BASE}.key`),
    clientCAFile,
  };
}
