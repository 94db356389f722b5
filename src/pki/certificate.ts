/**
 * X.509 v3 certificates for the server's own PKI (a CA, the serving certificate and client
 * certificates, ECDSA P-256 with SHA-256) and for certificate signing requests (any usages and
 * subject alternative names, issued with an ECDSA, RSA or Ed25519 CA key), signed with
 * `node:crypto` and encoded by `der.ts`.
 *
 * The shapes follow what Go's crypto/x509 (kubectl, client-go) and OpenSSL (Node's TLS) accept:
 * positive random serials, a critical basicConstraints, a critical keyUsage, extKeyUsage for
 * leaves, subject and authority key identifiers, and subjectAltName with DNS names and IPs.
 */
import {
  createHash,
  generateKeyPair as generateKeyPairCallback,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import * as der from './der.js';

const OID_EC_SHA256 = '1.2.840.10045.4.3.2';
const OID_EC_SHA384 = '1.2.840.10045.4.3.3';
const OID_EC_SHA512 = '1.2.840.10045.4.3.4';
const OID_RSA_SHA256 = '1.2.840.113549.1.1.11';
const OID_ED25519 = '1.3.101.112';
const OID_CN = '2.5.4.3';
const OID_O = '2.5.4.10';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_SUBJECT_KEY_ID = '2.5.29.14';
const OID_AUTHORITY_KEY_ID = '2.5.29.35';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** keyUsage bit numbers (RFC 5280 4.2.1.3). */
const KU_DIGITAL_SIGNATURE = 0;
const KU_KEY_CERT_SIGN = 5;
const KU_CRL_SIGN = 6;

/** A private key and its certificate, both PEM. */
export interface CertKeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Subject of a certificate: common name and organizations (Kubernetes: user and groups). */
export interface Subject {
  readonly commonName: string;
  readonly organizations?: readonly string[];
}

/** The signer of a certificate: the CA's encoded subject name and its keys. */
export interface Issuer {
  /** The DER of the CA certificate's subject Name, copied byte for byte into `issuer`. */
  readonly subjectDer: Uint8Array;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

/**
 * Explicit usages of a leaf: keyUsage bit numbers (RFC 5280 4.2.1.3: 0 digitalSignature … 8
 * decipherOnly) and extKeyUsage OIDs; an empty list leaves its extension out.
 */
export interface KeyUsages {
  readonly keyUsageBits: readonly number[];
  readonly extKeyUsageOids: readonly string[];
}

/**
 * What to issue. `usage` fixes basicConstraints, keyUsage and extKeyUsage: `ca`, a `server` or
 * `client` leaf (digitalSignature and that extended usage), or a leaf with explicit
 * {@link KeyUsages} (what a CertificateSigningRequest asks for).
 */
export interface IssueRequest {
  readonly subject: Subject;
  /** The encoded subject Name, used as is instead of `subject` (a CSR's own subject). */
  readonly subjectDer?: Uint8Array;
  readonly publicKey: KeyObject;
  readonly usage: 'ca' | 'server' | 'client' | KeyUsages;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Self-signed (a CA) when undefined; the request's key must then be the issuer's. */
  readonly issuer?: Issuer;
  /** For a self-signed certificate: its own private key. */
  readonly selfSigningKey?: KeyObject;
  readonly dnsNames?: readonly string[];
  /** IPv4 or IPv6 literals; anything else throws. */
  readonly ipAddresses?: readonly string[];
  readonly emailAddresses?: readonly string[];
  readonly uris?: readonly string[];
}

/**
 * A fresh ECDSA P-256 key pair, generated on libuv's thread pool so that a starting server
 * loads its modules meanwhile.
 */
export function generateKeyPair(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    generateKeyPairCallback('ec', { namedCurve: 'prime256v1' }, (err, publicKey, privateKey) => {
      if (err !== null) reject(err);
      else resolve({ publicKey, privateKey });
    });
  });
}

/** PKCS#8 PEM of a private key (Go's tls.X509KeyPair and Node's TLS both read it). */
export function privateKeyPem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** PEM armour around DER bytes. */
export function toPem(label: string, derBytes: Uint8Array): string {
  const b64 = Buffer.from(derBytes).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function parseHexGroups(s: string): number[] {
  return s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16));
}

/** The 4 or 16 network-order bytes of an IP literal (IPv6 may embed an IPv4 tail or a zone). */
export function ipToBytes(ip: string): Uint8Array {
  if (isIPv4(ip)) return Uint8Array.from(ip.split('.').map((p) => Number.parseInt(p, 10)));
  if (!isIPv6(ip)) throw new RangeError(`not an IP address: ${ip}`);
  let text = ip.split('%')[0] ?? ip;
  const v4Tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const b = ipToBytes(last);
    v4Tail.push(((b[0] ?? 0) << 8) | (b[1] ?? 0), ((b[2] ?? 0) << 8) | (b[3] ?? 0));
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const gap = text.indexOf('::');
  const head = parseHexGroups(gap === -1 ? text : text.slice(0, gap));
  const tail = [...(gap === -1 ? [] : parseHexGroups(text.slice(gap + 2))), ...v4Tail];
  const groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** The DER of a subject Name (organizations, then the common name). */
export function encodeName(subject: Subject): Uint8Array {
  // One RDN per attribute, organizations first and the common name last, as Go orders them.
  const rdns = (subject.organizations ?? []).map((o) =>
    der.set(der.sequence(der.oid(OID_O), der.utf8String(o))),
  );
  rdns.push(der.set(der.sequence(der.oid(OID_CN), der.utf8String(subject.commonName))));
  return der.sequence(...rdns);
}

/**
 * SHA-1 of the public key bits (the subjectPublicKey BIT STRING of the key's SPKI, without its
 * unused-bits byte), the customary subject key identifier (RFC 5280 4.2.1.2), for any key type.
 */
function keyIdentifier(publicKey: KeyObject): Uint8Array {
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const outer = der.readTlv(spki, 0);
  const algorithm = der.readTlv(spki, outer.contentStart);
  const bits = der.readTlv(spki, algorithm.end);
  return createHash('sha1')
    .update(spki.subarray(bits.contentStart + 1, bits.end))
    .digest();
}

/** The signature algorithm for a signing key: its AlgorithmIdentifier DER and node's digest. */
function signatureAlgorithm(key: KeyObject): { readonly id: Uint8Array; readonly digest: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { id: der.sequence(der.oid(OID_RSA_SHA256), der.nullValue()), digest: 'sha256' };
    case 'ed25519':
      return { id: der.sequence(der.oid(OID_ED25519)), digest: null };
    case 'ec': {
      // Go's choice per curve: SHA-256 for P-256, SHA-384 for P-384, SHA-512 for P-521.
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { id: der.sequence(der.oid(OID_EC_SHA384)), digest: 'sha384' };
      if (curve === 'secp521r1') return { id: der.sequence(der.oid(OID_EC_SHA512)), digest: 'sha512' };
      return { id: der.sequence(der.oid(OID_EC_SHA256)), digest: 'sha256' };
    }
    default:
      throw new Error(`issueCertificate: unsupported signing key type ${String(key.asymmetricKeyType)}`);
  }
}

function leafUsages(usage: 'server' | 'client' | KeyUsages): KeyUsages {
  if (usage === 'server') return { keyUsageBits: [KU_DIGITAL_SIGNATURE], extKeyUsageOids: [OID_SERVER_AUTH] };
  if (usage === 'client') return { keyUsageBits: [KU_DIGITAL_SIGNATURE], extKeyUsageOids: [OID_CLIENT_AUTH] };
  return usage;
}

/**
 * The DER of the subject Name of a DER certificate: chain building (Go, OpenSSL) matches a
 * child's issuer to its parent's subject byte for byte, so children copy it rather than re-encode.
 * @throws RangeError when `certDer` is not a certificate.
 */
export function subjectDerOf(certDer: Uint8Array): Uint8Array {
  const cert = der.readTlv(certDer, 0);
  const tbs = der.readTlv(certDer, cert.contentStart);
  let pos = tbs.contentStart;
  let field = der.readTlv(certDer, pos);
  if (field.tag === 0xa0) field = der.readTlv(certDer, (pos = field.end)); // version
  // serial, signature algorithm, issuer, validity, then subject
  for (let i = 0; i < 4; i++) field = der.readTlv(certDer, (pos = field.end));
  if (field.tag !== 0x30) throw new RangeError('certificate subject is not a SEQUENCE');
  return certDer.subarray(field.offset, field.end);
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical
    ? der.sequence(der.oid(id), der.boolean(true), der.octetString(value))
    : der.sequence(der.oid(id), der.octetString(value));
}

/**
 * Issues one certificate. Returns its PEM. The serial is 16 random bytes (positive); validity
 * is cut to whole seconds.
 * @throws RangeError for a malformed IP address; Error when a self-signed request has no key.
 */
export function issueCertificate(req: IssueRequest): string {
  const signer = req.issuer;
  const signingKey = signer?.privateKey ?? req.selfSigningKey;
  if (signingKey === undefined)
    throw new Error('issueCertificate: a self-signed certificate needs selfSigningKey');
  const { id: algorithm, digest } = signatureAlgorithm(signingKey);
  const subjectKeyId = keyIdentifier(req.publicKey);
  const authorityKeyId = signer === undefined ? subjectKeyId : keyIdentifier(signer.publicKey);

  const extensions: Uint8Array[] = [];
  if (req.usage === 'ca') {
    extensions.push(extension(OID_BASIC_CONSTRAINTS, true, der.sequence(der.boolean(true))));
    extensions.push(
      extension(OID_KEY_USAGE, true, der.namedBits([KU_DIGITAL_SIGNATURE, KU_KEY_CERT_SIGN, KU_CRL_SIGN])),
    );
  } else {
    const { keyUsageBits, extKeyUsageOids } = leafUsages(req.usage);
    extensions.push(extension(OID_BASIC_CONSTRAINTS, true, der.sequence()));
    if (keyUsageBits.length > 0) extensions.push(extension(OID_KEY_USAGE, true, der.namedBits(keyUsageBits)));
    if (extKeyUsageOids.length > 0) {
      const ekus = extKeyUsageOids.map((o) => der.oid(o));
      extensions.push(extension(OID_EXT_KEY_USAGE, false, der.sequence(...ekus)));
    }
  }
  extensions.push(extension(OID_SUBJECT_KEY_ID, false, der.octetString(subjectKeyId)));
  extensions.push(
    extension(OID_AUTHORITY_KEY_ID, false, der.sequence(der.implicitPrimitive(0, authorityKeyId))),
  );
  // Go's order: DNS names, email addresses, IP addresses, URIs.
  const altNames = [
    ...(req.dnsNames ?? []).map((d) => der.implicitPrimitive(2, Buffer.from(d, 'ascii'))),
    ...(req.emailAddresses ?? []).map((e) => der.implicitPrimitive(1, Buffer.from(e, 'ascii'))),
    ...(req.ipAddresses ?? []).map((ip) => der.implicitPrimitive(7, ipToBytes(ip))),
    ...(req.uris ?? []).map((u) => der.implicitPrimitive(6, Buffer.from(u, 'ascii'))),
  ];
  if (altNames.length > 0) extensions.push(extension(OID_SUBJECT_ALT_NAME, false, der.sequence(...altNames)));

  const spki = req.publicKey.export({ format: 'der', type: 'spki' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const tbs = der.sequence(
    der.explicit(0, der.smallInteger(2)),
    der.unsignedInteger(serial),
    algorithm,
    signer?.subjectDer ?? req.subjectDer ?? encodeName(req.subject),
    der.sequence(der.time(req.notBefore), der.time(req.notAfter)),
    req.subjectDer ?? encodeName(req.subject),
    spki,
    der.explicit(3, der.sequence(...extensions)),
  );
  const signature = sign(digest, tbs, signingKey);
  return toPem('CERTIFICATE', der.sequence(tbs, algorithm, der.bitString(signature)));
}
