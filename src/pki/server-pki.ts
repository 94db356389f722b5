/**
 * The server's certificates in `--cert-dir`: a CA, the serving certificate (unless
 * `--tls-cert-file` is given) and the admin client certificate, generated on first start and
 * reused afterwards so that kubeconfigs and trust survive restarts.
 *
 * Files (PEM; keys mode 0600): `ca.crt`/`ca.key`, `apiserver.crt`/`apiserver.key` (the names
 * kube-apiserver uses for its self-generated pair), `admin.crt`/`admin.key`, and on request
 * kubeadm's `apiserver-kubelet-client.crt`/`.key`.
 *
 * Reuse rules: a file pair is reused when it parses, the key matches, it is not within a day of
 * expiry, it is signed by the CA in use, and (serving) it still names every required host and
 * IP; otherwise that pair alone is regenerated. A CA that fails its checks is replaced together
 * with both leaves (they would no longer verify).
 *
 * A serving pair in `apiserver.crt`/`apiserver.key` that Capstan did not issue (envtest writes its
 * own, signed by its CA) is served unchanged and never rewritten, as kube-apiserver does; the
 * admin kubeconfig then trusts the root at the end of that file's chain, or the certificate
 * itself (see {@link trustFor}). Likewise a `ca.crt` that is not Capstan's and comes without its
 * key is left alone (Capstan's CA is then `capstan-ca.crt`/`capstan-ca.key`).
 */
import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { servedAddresses } from './served-addresses.js';
import { join } from 'node:path';
import {
  generateKeyPair,
  issueCertificate,
  privateKeyPem,
  subjectDerOf,
  type CertKeyPair,
  type Issuer,
} from './certificate.js';

/** Where the PKI lives and which names the serving certificate must carry. */
export interface ServerPkiOptions {
  /** `--cert-dir`; created (mode 0700) when missing. */
  readonly certDir: string;
  /** `--advertise-address`: added to the serving certificate (as IP, or DNS name if not an IP). */
  readonly advertiseAddress?: string;
  /** `--bind-address`: added when it is a specific address; a wildcard adds every interface address. */
  readonly bindAddress?: string;
  /** `--tls-cert-file` and `--tls-private-key-file`: serve with these instead of generating. */
  readonly tlsCertFile?: string;
  readonly tlsPrivateKeyFile?: string;
  /** `--client-ca-file`: further CAs trusted for client certificates. */
  readonly clientCaFile?: string;
  /**
   * Also load or issue the server's client certificate towards node agents, laid out as kubeadm
   * does: `apiserver-kubelet-client.crt`/`.key`, `CN=kube-apiserver-kubelet-client` in
   * `system:masters` (as kubeadm issued it before v1.29). `capstan cluster` asks for it; a bare
   * server does not, so its start-up does not grow.
   */
  readonly kubeletClient?: boolean;
  /** The clock (tests); defaults to now. */
  readonly now?: Date;
}

/** The material the TLS listener and the admin kubeconfig need. */
export interface ServerPki {
  readonly ca: CertKeyPair;
  /** The certificate and key the listener serves. */
  readonly serving: CertKeyPair;
  /** Client certificate for `system:admin` in group `system:masters`. */
  readonly admin: CertKeyPair;
  /** The kubelet client pair, when {@link ServerPkiOptions.kubeletClient} asked for it. */
  readonly kubeletClient?: CertKeyPair;
  /** PEM bundle clients should trust for the serving certificate. */
  readonly servingTrustPem: string;
  /** PEMs of the CAs that verify client certificates (Capstan's CA, then `--client-ca-file`). */
  readonly clientCaPems: readonly string[];
  /** Base names of the files written by this call (empty when everything was reused). */
  readonly written: readonly string[];
}

/** A certificate file is unusable (unreadable, not PEM, key mismatch); code is stable. */
export class PkiError extends Error {
  readonly code = 'PKI_INVALID_FILE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PkiError';
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;
const CA_LIFETIME_MS = 10 * 365 * DAY_MS;
const LEAF_LIFETIME_MS = 365 * DAY_MS;
/** Backdating tolerates clients whose clock is a little behind ours. */
const BACKDATE_MS = 5 * 60 * 1000;
/** kubeadm's name for the API server's identity towards kubelets. */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';
/** The base name of that pair's files in the cert dir (kubeadm's). */
export const KUBELET_CLIENT_BASE = 'apiserver-kubelet-client';
const SERVICE_NAMES = [
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
];

interface Loaded {
  readonly pair: CertKeyPair;
  readonly cert: X509Certificate;
  readonly privateKey: KeyObject;
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes through a temporary file and a rename, so a crash never leaves half a PEM. */
async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  await rename(tmp, path);
}

async function loadPair(dir: string, base: string): Promise<Loaded | undefined> {
  const [certPem, keyPem] = await Promise.all([
    readIfExists(join(dir, `${base}.crt`)),
    readIfExists(join(dir, `${base}.key`)),
  ]);
  if (certPem === undefined || keyPem === undefined) return undefined;
  try {
    const cert = new X509Certificate(certPem);
    const privateKey = createPrivateKey(keyPem);
    if (!cert.checkPrivateKey(privateKey)) return undefined;
    return { pair: { certPem, keyPem }, cert, privateKey };
  } catch {
    return undefined; // garbled files are regenerated, like missing ones
  }
}

function usable(cert: X509Certificate, now: Date, issuer: X509Certificate | undefined): boolean {
  if (Date.parse(cert.validTo) - now.getTime() < DAY_MS) return false;
  if (Date.parse(cert.validFrom) - BACKDATE_MS > now.getTime()) return false;
  return issuer === undefined || cert.verify(issuer.publicKey);
}

/** The DNS names and IPs the serving certificate must carry. */
export function servingNames(options: Pick<ServerPkiOptions, 'advertiseAddress' | 'bindAddress'>): {
  dnsNames: string[];
  ipAddresses: string[];
} {
  const dnsNames = ['localhost'];
  const host = hostname().toLowerCase();
  if (/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(host) && host !== 'localhost') dnsNames.push(host);
  dnsNames.push(...SERVICE_NAMES);
  const ipAddresses = ['127.0.0.1', '::1'];
  const bind = options.bindAddress;
  // A wildcard bind serves every interface address: the certificate names each of them.
  const served =
    bind === undefined
      ? []
      : bind === '' || bind === '0.0.0.0' || bind === '::'
        ? servedAddresses(bind)
        : [bind];
  for (const addr of [options.advertiseAddress, ...served]) {
    if (addr === undefined || addr === '' || addr === '0.0.0.0' || addr === '::') continue;
    if (isIP(addr) !== 0) {
      if (!ipAddresses.includes(addr)) ipAddresses.push(addr);
    } else if (!dnsNames.includes(addr.toLowerCase())) {
      dnsNames.push(addr.toLowerCase());
    }
  }
  return { dnsNames, ipAddresses };
}

function coversNames(cert: X509Certificate, names: { dnsNames: string[]; ipAddresses: string[] }): boolean {
  return (
    names.dnsNames.every((d) => cert.checkHost(d, { subject: 'never' }) !== undefined) &&
    names.ipAddresses.every((ip) => cert.checkIP(ip) !== undefined)
  );
}

/** The subject CN of the serving certificates Capstan issues. */
const SERVING_COMMON_NAME = 'capstan-apiserver';
/** How the subject CN of Capstan's own CAs begins. */
const CA_COMMON_NAME_PREFIX = 'capstan-ca@';

/** True for a serving certificate Capstan issued (its own CN, issued by one of its CAs). */
function issuedByCapstan(cert: X509Certificate): boolean {
  const cn = (dn: string): string => /(?:^|\n)CN=([^\n]*)/.exec(dn)?.[1] ?? '';
  return cn(cert.subject) === SERVING_COMMON_NAME && cn(cert.issuer).startsWith(CA_COMMON_NAME_PREFIX);
}

/** True when `ca.crt` exists, is not one of Capstan's CAs, and has no usable `ca.key`. */
async function foreignCaFile(dir: string): Promise<boolean> {
  const pem = await readIfExists(join(dir, 'ca.crt'));
  if (pem === undefined || (await loadPair(dir, 'ca')) !== undefined) return false;
  try {
    const cn = /(?:^|\n)CN=([^\n]*)/.exec(new X509Certificate(pem).subject)?.[1] ?? '';
    return !cn.startsWith(CA_COMMON_NAME_PREFIX);
  } catch {
    return false; // garbled: Capstan's own file, regenerated as before
  }
}

/** True when the CA in use issued `serving` (clients then trust that CA). */
function issuedBy(serving: CertKeyPair, ca: Loaded): boolean {
  try {
    return new X509Certificate(serving.certPem).verify(ca.cert.publicKey);
  } catch {
    return false;
  }
}

/** The PEM blocks of a certificate file, in order. */
function pemBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * What a client should trust for a serving certificate Capstan did not issue: the self-signed
 * root at the end of the file's chain when the file carries one (kube-apiserver's own generated
 * `apiserver.crt` is the certificate followed by its CA), else the certificate itself (Go
 * clients accept a leaf found in their root pool as it is; the issuing CA is not Capstan's to
 * know).
 */
export function trustFor(certPem: string): string {
  const blocks = pemBlocks(certPem);
  const last = blocks[blocks.length - 1];
  if (last !== undefined && blocks.length > 1) {
    try {
      const root = new X509Certificate(last);
      if (root.issuer === root.subject && root.verify(root.publicKey)) return `${last}\n`;
    } catch {
      // not a usable root: fall back to the leaf
    }
  }
  const leaf = blocks[0];
  return leaf === undefined ? certPem : `${leaf}\n`;
}

function issuerOf(ca: Loaded): Issuer {
  return {
    subjectDer: subjectDerOf(ca.cert.raw),
    privateKey: ca.privateKey,
    publicKey: createPublicKey(ca.privateKey),
  };
}

/**
 * Loads or generates the server's PKI (see the module comment for the rules).
 * @throws PkiError when `--tls-cert-file`/`--tls-private-key-file` or `--client-ca-file` are
 *   unreadable or do not match; file-system errors of the cert dir as they are.
 */
export async function ensureServerPki(options: ServerPkiOptions): Promise<ServerPki> {
  const now = options.now ?? new Date();
  const dir = options.certDir;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const written: string[] = [];
  const notBefore = new Date(now.getTime() - BACKDATE_MS);

  const save = async (base: string, pair: CertKeyPair): Promise<void> => {
    await writeAtomic(join(dir, `${base}.key`), pair.keyPem, 0o600);
    await writeAtomic(join(dir, `${base}.crt`), pair.certPem, 0o644);
    written.push(`${base}.crt`, `${base}.key`);
  };

  // A `ca.crt` Capstan cannot use and did not write (a tool's own file, without its key) is left
  // alone: Capstan's CA then lives in `capstan-ca.crt`/`capstan-ca.key`.
  const caBase = (await foreignCaFile(dir)) ? 'capstan-ca' : 'ca';
  let ca = await loadPair(dir, caBase);
  if (ca === undefined || !ca.cert.ca || !usable(ca.cert, now, ca.cert)) {
    const keys = await generateKeyPair();
    const commonName = `capstan-ca@${Math.floor(now.getTime() / 1000)}`;
    const certPem = issueCertificate({
      subject: { commonName },
      publicKey: keys.publicKey,
      selfSigningKey: keys.privateKey,
      usage: 'ca',
      notBefore,
      notAfter: new Date(now.getTime() + CA_LIFETIME_MS),
    });
    const pair = { certPem, keyPem: privateKeyPem(keys.privateKey) };
    await save(caBase, pair);
    ca = { pair, cert: new X509Certificate(certPem), privateKey: keys.privateKey };
  }
  const issuer = issuerOf(ca);
  const caChanged = written.length > 0;

  const issueLeaf = async (
    base: string,
    usage: 'server' | 'client',
    subject: { commonName: string; organizations?: readonly string[] },
    names?: { dnsNames: string[]; ipAddresses: string[] },
  ): Promise<CertKeyPair> => {
    const keys = await generateKeyPair();
    const certPem = issueCertificate({
      subject,
      publicKey: keys.publicKey,
      issuer,
      usage,
      notBefore,
      notAfter: new Date(now.getTime() + LEAF_LIFETIME_MS),
      ...(names ?? {}),
    });
    const pair = { certPem, keyPem: privateKeyPem(keys.privateKey) };
    await save(base, pair);
    return pair;
  };

  // The two leaves are independent: load or issue them concurrently (key generation runs on
  // the thread pool).
  const caCert = ca.cert;
  const servingPromise = (async (): Promise<CertKeyPair> => {
    if (options.tlsCertFile !== undefined && options.tlsCertFile !== '') {
      return loadUserServingPair(options.tlsCertFile, options.tlsPrivateKeyFile);
    }
    const names = servingNames(options);
    const existing = await loadPair(dir, 'apiserver');
    // A pair Capstan did not issue (envtest's, an operator's) is served as it is, as
    // kube-apiserver serves whatever pair it finds in --cert-dir.
    if (existing !== undefined && !issuedByCapstan(existing.cert)) return existing.pair;
    return existing !== undefined &&
      !caChanged &&
      usable(existing.cert, now, caCert) &&
      coversNames(existing.cert, names)
      ? existing.pair
      : issueLeaf('apiserver', 'server', { commonName: SERVING_COMMON_NAME }, names);
  })();
  const clientLeaf = async (base: string, commonName: string): Promise<CertKeyPair> => {
    const existing = caChanged ? undefined : await loadPair(dir, base);
    return existing !== undefined && usable(existing.cert, now, caCert)
      ? existing.pair
      : issueLeaf(base, 'client', { commonName, organizations: ['system:masters'] });
  };
  const adminPromise = clientLeaf('admin', 'system:admin');
  const kubeletClientPromise =
    options.kubeletClient === true ? clientLeaf(KUBELET_CLIENT_BASE, KUBELET_CLIENT_USER) : undefined;
  const [servingResult, adminResult, kubeletClientResult] = await Promise.allSettled([
    servingPromise,
    adminPromise,
    kubeletClientPromise,
  ]);
  if (servingResult.status === 'rejected') throw servingResult.reason;
  if (adminResult.status === 'rejected') throw adminResult.reason;
  if (kubeletClientResult.status === 'rejected') throw kubeletClientResult.reason;
  const serving = servingResult.value;
  const admin = adminResult.value;
  const kubeletClient = kubeletClientResult.value;
  const servingTrustPem = issuedBy(serving, ca) ? ca.pair.certPem : trustFor(serving.certPem);

  const clientCaPems = [ca.pair.certPem];
  if (options.clientCaFile !== undefined && options.clientCaFile !== '') {
    const pem = await readUserFile(options.clientCaFile, '--client-ca-file');
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new PkiError(`--client-ca-file ${options.clientCaFile}: not a PEM certificate`, { cause: err });
    }
    clientCaPems.push(pem);
  }
  return {
    ca: ca.pair,
    serving,
    admin,
    ...(kubeletClient !== undefined ? { kubeletClient } : {}),
    servingTrustPem,
    clientCaPems,
    written,
  };
}

async function readUserFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new PkiError(`${flag} ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: err,
    });
  }
}

async function loadUserServingPair(certFile: string, keyFile: string | undefined): Promise<CertKeyPair> {
  if (keyFile === undefined || keyFile === '') {
    throw new PkiError('--tls-cert-file requires --tls-private-key-file');
  }
  // Read together, reported in flag order (whichever read fails first, the certificate's error wins).
  const [cert, key] = await Promise.allSettled([
    readUserFile(certFile, '--tls-cert-file'),
    readUserFile(keyFile, '--tls-private-key-file'),
  ]);
  if (cert.status === 'rejected') throw cert.reason;
  if (key.status === 'rejected') throw key.reason;
  const certPem = cert.value;
  const keyPem = key.value;
  try {
    if (!new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem))) {
      throw new PkiError(`--tls-private-key-file ${keyFile} does not match --tls-cert-file ${certFile}`);
    }
  } catch (err) {
    if (err instanceof PkiError) throw err;
    throw new PkiError(`--tls-cert-file ${certFile} or --tls-private-key-file ${keyFile} is not valid PEM`, {
      cause: err,
    });
  }
  return { certPem, keyPem };
}
