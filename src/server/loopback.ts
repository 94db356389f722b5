/**
 * The in-process loopback identity: a {@link ClientConfig} with which a component running in this
 * process (the controller manager, the scheduler, a node agent) reaches this server through the
 * client library, as its own user. The client certificate is minted in memory, signed by the
 * cluster CA the server trusts for client certificates, so authentication, authorization,
 * admission and audit see the component as they see kube's (`system:kube-controller-manager`,
 * `system:kube-scheduler`, `system:node:<name>` in `system:nodes`, ...). Nothing is written to disk.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import type { ClientConfig } from '../client/config.js';
import {
  generateKeyPair,
  issueCertificate,
  privateKeyPem,
  subjectDerOf,
  type CertKeyPair,
} from '../pki/certificate.js';

/** What {@link loopbackConfig} needs of the running server. */
export interface LoopbackServer {
  /** `https://host:port` this process reaches the server at (the admin kubeconfig's URL). */
  readonly url: string;
  /** The cluster CA (certificate and key) that signs client certificates. */
  readonly ca: CertKeyPair;
  /** PEM the client trusts for the serving certificate. */
  readonly servingTrustPem: string;
}

/** An identity: the user name, its groups, and optional client settings. */
export interface LoopbackIdentity {
  readonly user: string;
  readonly groups?: readonly string[];
  readonly userAgent?: string;
  /** Client-side limits (default: unlimited, as kube's loopback client configs for its own loops). */
  readonly qps?: number;
  readonly burst?: number;
}

/**
 * False when `trustPem` is a lone leaf signed by a CA the server was not given (envtest hands
 * kube-apiserver such a serving certificate, without its chain): nothing then verifies it, and
 * the loopback client, which only ever dials this process's own port on the loopback address,
 * skips verification. kube-apiserver instead serves its loopback clients a certificate of its
 * own under the SNI name `apiserver-loopback-client`; Capstan does not yet.
 */
function verifiable(trustPem: string): boolean {
  try {
    const cert = new X509Certificate(trustPem);
    return cert.ca || (cert.issuer === cert.subject && cert.verify(cert.publicKey));
  } catch {
    return true;
  }
}

/** Client certificates are backdated by this much (clock steps) and valid this long. */
const BACKDATE_MS = 5 * 60_000;
const LIFETIME_MS = 365 * 24 * 3600_000;

/**
 * A ClientConfig for `identity` against `server`, with a fresh ECDSA key and a client
 * certificate (CN = user, O = groups) signed by the cluster CA.
 * @throws Error when the CA's certificate or key cannot be parsed.
 */
export async function loopbackConfig(
  server: LoopbackServer,
  identity: LoopbackIdentity,
): Promise<ClientConfig> {
  const caCert = new X509Certificate(server.ca.certPem);
  const caKey = createPrivateKey(server.ca.keyPem);
  const keys = await generateKeyPair();
  const now = Date.now();
  const certPem = issueCertificate({
    subject: { commonName: identity.user, organizations: identity.groups ?? [] },
    publicKey: keys.publicKey,
    issuer: { subjectDer: subjectDerOf(caCert.raw), privateKey: caKey, publicKey: createPublicKey(caKey) },
    usage: 'client',
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + LIFETIME_MS),
  });
  return {
    server: server.url,
    ...(verifiable(server.servingTrustPem)
      ? { caData: Buffer.from(server.servingTrustPem) }
      : { insecureSkipTlsVerify: true }),
    certData: Buffer.from(certPem),
    keyData: Buffer.from(privateKeyPem(keys.privateKey)),
    qps: identity.qps ?? -1,
    burst: identity.burst ?? 1000,
    // No HTTP/2 health check: the peer is this process, so the connection cannot outlive it, and
    // a PING held up behind a busy event loop would only drop every watch for nothing.
    http2ReadIdleTimeoutMs: 0,
    ...(identity.userAgent === undefined ? {} : { userAgent: identity.userAgent }),
  };
}
