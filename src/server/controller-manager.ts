/**
 * The controller manager inside `capstan server`: the same manager `capstan controller-manager`
 * runs, reaching this server over HTTPS on 127.0.0.1 as `system:kube-controller-manager` (a
 * client certificate minted from the server's CA), with kube's defaults and leader election, so
 * several servers over one store still run one set of controllers. Controllers act as their own
 * service accounts (`--use-service-account-credentials`, as kubeadm configures kube): the
 * bootstrap RBAC policy grants `system:kube-controller-manager` little beyond reading.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import type { ClientConfig } from '../client/index.js';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../pki/certificate.js';
import type { ServerPki } from '../pki/server-pki.js';
import { defaultManagerOptions } from '../controller-manager/options.js';
import { startControllerManager, type RunningManager } from '../controller-manager/manager.js';
import type { ServerLog } from './log.js';

/**
 * A client configuration for `user` in `groups` against this server's loopback address.
 * (Kept in this one function until the client library's `loopbackConfig` replaces it.)
 */
export async function loopbackClientConfig(
  pki: ServerPki,
  url: string,
  user: string,
  groups: readonly string[],
): Promise<ClientConfig> {
  const { privateKey, publicKey } = await generateKeyPair();
  const caKey = createPrivateKey(pki.ca.keyPem);
  const now = Date.now();
  const certPem = issueCertificate({
    subject: { commonName: user, organizations: groups },
    publicKey,
    usage: 'client',
    notBefore: new Date(now - 5 * 60_000),
    notAfter: new Date(now + 365 * 24 * 3600_000),
    issuer: {
      subjectDer: subjectDerOf(new X509Certificate(pki.ca.certPem).raw),
      privateKey: caKey,
      publicKey: createPublicKey(caKey),
    },
  });
  return {
    server: url,
    caData: Buffer.from(pki.servingTrustPem),
    certData: Buffer.from(certPem),
    keyData: Buffer.from(privateKeyPem(privateKey)),
  };
}

/** Starts the in-process manager with `controllers` (the `--controllers` selection). */
export async function startInProcessControllerManager(
  pki: ServerPki,
  url: string,
  controllers: readonly string[],
  log: ServerLog,
): Promise<RunningManager> {
  const clientConfig = await loopbackClientConfig(pki, url, 'system:kube-controller-manager', []);
  const options = defaultManagerOptions({
    controllers,
    useServiceAccountCredentials: true,
    // The loopback is not a shared network: kube's client limits would only slow it down.
    qps: -1,
    burst: 0,
  });
  return startControllerManager({
    clientConfig,
    options,
    log: {
      info: (line) =>
        process.env['CAPSTAN_CM_VERBOSE'] === '1' ? log.warn(`controller-manager: ${line}`) : undefined,
      warn: (line) => log.warn(`controller-manager: ${line}`),
      error: (line, err) => log.error(`controller-manager: ${line}`, err),
    },
  });
}
