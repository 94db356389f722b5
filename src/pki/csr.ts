/**
 * PKCS#10 certificate signing requests (the `spec.request` of a CertificateSigningRequest):
 * parsing (subject common name and organizations, the public key, the self-signature checked)
 * and, for tests and tools, creating one with a key pair.
 */
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import * as der from './der.js';
import { encodeName, toPem, type Subject } from './certificate.js';

/** A parsed, signature-checked request. */
export interface ParsedCsr {
  readonly subject: { readonly commonName: string; readonly organizations: readonly string[] };
  readonly publicKey: KeyObject;
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
    const [, name, spki] = children(buf, info);
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
    return { subject: { commonName, organizations }, publicKey };
  } catch (err) {
    if (err instanceof CsrError) throw err;
    throw new CsrError(`malformed request: ${(err as Error).message}`);
  }
}

/** A PEM request for `subject` signed with an EC P-256 `privateKey` (tests and tools). */
export function createCsr(subject: Subject, publicKey: KeyObject, privateKey: KeyObject): string {
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const info = der.sequence(der.smallInteger(0), encodeName(subject), spki, der.tlv(0xa0));
  const alg = der.sequence(der.oid('1.2.840.10045.4.3.2'));
  const signature = sign('sha256', info, privateKey);
  return toPem('CERTIFICATE REQUEST', der.sequence(info, alg, der.bitString(signature)));
}
