/**
 * PKCS#10 certificate signing requests (the `spec.request` of a CertificateSigningRequest):
 * parsing (subject common name and organizations, the public key, the requested subject
 * alternative names, the self-signature checked)
 * and, for tests and tools, creating one with a key pair.
 */
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import * as der from './der.js';
import { encodeName, ipToBytes, toPem, type Subject } from './certificate.js';

/** A parsed, signature-checked request. */
export interface ParsedCsr {
  readonly subject: { readonly commonName: string; readonly organizations: readonly string[] };
  /** The subject Name's DER as the request encodes it. */
  readonly subjectDer: Uint8Array;
  readonly publicKey: KeyObject;
  /** Subject alternative names of the request's extensionRequest attribute. */
  readonly dnsNames: readonly string[];
  readonly emailAddresses: readonly string[];
  /** IPv4 dotted quads, IPv6 as eight uncompressed hex groups. */
  readonly ipAddresses: readonly string[];
  readonly uris: readonly string[];
}

/** Subject alternative names a request may ask for (tests and tools). */
export interface RequestedNames {
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly emailAddresses?: readonly string[];
  readonly uris?: readonly string[];
}

/** A request that cannot be used; the message says why. */
export class CsrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsrError';
  }
}

const OID_CN = Buffer.from([0x55, 0x04, 0x03]);
const OID_O = Buffer.from([0x55, 0x04, 0x0a]);
const OID_EC_SHA256 = Buffer.from([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);
const OID_EC_SHA384 = Buffer.from([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03]);
const OID_RSA_SHA256 = Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]);
const OID_ED25519 = Buffer.from([0x2b, 0x65, 0x70]);
const OID_EXTENSION_REQUEST = Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0e]);
const OID_SUBJECT_ALT_NAME = Buffer.from([0x55, 0x1d, 0x11]);

function children(buf: Uint8Array, span: der.TlvSpan): der.TlvSpan[] {
  const out: der.TlvSpan[] = [];
  for (let at = span.contentStart; at < span.end;) {
    const t = der.readTlv(buf, at);
    out.push(t);
    at = t.end;
  }
  return out;
}

function contents(buf: Uint8Array, span: der.TlvSpan): Buffer {
  return Buffer.from(buf.subarray(span.contentStart, span.end));
}

/** The DER bytes inside a PEM block labelled CERTIFICATE REQUEST. */
function pemBody(pem: string): Buffer {
  const m =
    /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([\s\S]*?)-----END (?:NEW )?CERTIFICATE REQUEST-----/.exec(
      pem,
    );
  if (m?.[1] === undefined) throw new CsrError('PEM block type must be CERTIFICATE REQUEST');
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

function digestOf(alg: Buffer): string | null {
  if (alg.equals(OID_EC_SHA256) || alg.equals(OID_RSA_SHA256)) return 'sha256';
  if (alg.equals(OID_EC_SHA384)) return 'sha384';
  if (alg.equals(OID_ED25519)) return null;
  throw new CsrError('unsupported signature algorithm');
}

function ipText(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16) throw new CsrError('malformed IP address in subjectAltName');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}

type Names = { dnsNames: string[]; emailAddresses: string[]; ipAddresses: string[]; uris: string[] };

/** The subjectAltName entries of the request's attributes (`[0]` of CertificationRequestInfo). */
function requestedNames(buf: Uint8Array, attributes: der.TlvSpan | undefined): Names {
  const names: Names = { dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [] };
  if (attributes === undefined || attributes.tag !== 0xa0) return names;
  for (const attr of children(buf, attributes)) {
    const [type, values] = children(buf, attr);
    if (type === undefined || values === undefined || !contents(buf, type).equals(OID_EXTENSION_REQUEST))
      continue;
    for (const extensions of children(buf, values)) {
      for (const ext of children(buf, extensions)) {
        const parts = children(buf, ext);
        const id = parts[0];
        const value = parts[parts.length - 1];
        if (id === undefined || value === undefined || !contents(buf, id).equals(OID_SUBJECT_ALT_NAME))
          continue;
        const inner = contents(buf, value);
        for (const name of children(inner, der.readTlv(inner, 0))) {
          const text = contents(inner, name);
          if (name.tag === 0x82) names.dnsNames.push(text.toString('ascii'));
          else if (name.tag === 0x81) names.emailAddresses.push(text.toString('ascii'));
          else if (name.tag === 0x86) names.uris.push(text.toString('ascii'));
          else if (name.tag === 0x87) names.ipAddresses.push(ipText(text));
        }
      }
    }
  }
  return names;
}

/**
 * Parses a PEM certificate request and checks its self-signature.
 * @throws CsrError for anything malformed, unsupported or badly signed.
 */
export function parseCsr(pem: string): ParsedCsr {
  const buf = pemBody(pem);
  try {
    const outer = der.readTlv(buf, 0);
    const [info, algSeq, sig] = children(buf, outer);
    if (info === undefined || algSeq === undefined || sig === undefined)
      throw new CsrError('malformed request');
    const [, name, spki, attributes] = children(buf, info);
    if (name === undefined || spki === undefined) throw new CsrError('malformed request info');
    let commonName = '';
    const organizations: string[] = [];
    for (const rdn of children(buf, name)) {
      for (const atv of children(buf, rdn)) {
        const [type, value] = children(buf, atv);
        if (type === undefined || value === undefined) continue;
        const oid = contents(buf, type);
        const text = contents(buf, value).toString('utf8');
        if (oid.equals(OID_CN)) commonName = text;
        else if (oid.equals(OID_O)) organizations.push(text);
      }
    }
    const publicKey = createPublicKey({
      key: Buffer.from(buf.subarray(spki.offset, spki.end)),
      format: 'der',
      type: 'spki',
    });
    const [algOid] = children(buf, algSeq);
    if (algOid === undefined) throw new CsrError('malformed signature algorithm');
    const signature = contents(buf, sig).subarray(1); // BIT STRING: skip the unused-bits byte
    const signed = Buffer.from(buf.subarray(info.offset, info.end));
    if (!verify(digestOf(contents(buf, algOid)), signed, publicKey, signature)) {
      throw new CsrError('the request signature does not verify');
    }
    return {
      subject: { commonName, organizations },
      subjectDer: Buffer.from(buf.subarray(name.offset, name.end)),
      publicKey,
      ...requestedNames(buf, attributes),
    };
  } catch (err) {
    if (err instanceof CsrError) throw err;
    throw new CsrError(`malformed request: ${(err as Error).message}`);
  }
}

/**
 * A PEM request for `subject` (and the subject alternative names in `names`) signed with an EC
 * P-256 `privateKey` (tests and tools).
 */
export function createCsr(
  subject: Subject,
  publicKey: KeyObject,
  privateKey: KeyObject,
  names: RequestedNames = {},
): string {
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const alt = [
    ...(names.dnsNames ?? []).map((d) => der.implicitPrimitive(2, Buffer.from(d, 'ascii'))),
    ...(names.emailAddresses ?? []).map((e) => der.implicitPrimitive(1, Buffer.from(e, 'ascii'))),
    ...(names.ipAddresses ?? []).map((ip) => der.implicitPrimitive(7, ipToBytes(ip))),
    ...(names.uris ?? []).map((u) => der.implicitPrimitive(6, Buffer.from(u, 'ascii'))),
  ];
  const attributes =
    alt.length === 0
      ? der.tlv(0xa0)
      : der.tlv(
          0xa0,
          der.sequence(
            der.oid('1.2.840.113549.1.9.14'),
            der.set(der.sequence(der.sequence(der.oid('2.5.29.17'), der.octetString(der.sequence(...alt))))),
          ),
        );
  const info = der.sequence(der.smallInteger(0), encodeName(subject), spki, attributes);
  const alg = der.sequence(der.oid('1.2.840.10045.4.3.2'));
  const signature = sign('sha256', info, privateKey);
  return toPem('CERTIFICATE REQUEST', der.sequence(info, alg, der.bitString(signature)));
}
