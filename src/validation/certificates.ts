/**
 * certificates.k8s.io/v1 CertificateSigningRequest: a PEM `CERTIFICATE REQUEST`, a signer
 * name, and known, unique usages (v1 requires both `signerName` and `usages`).
 */
import { duplicate, GoValue, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isDNS1123Subdomain } from './formats.js';
import { has, num, obj, str, strings, type JsonObject } from './json.js';
import { child, index } from './path.js';

const USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

/** Go's `%#v` of a byte slice: `[]byte(nil)`, `[]byte{}`, `[]byte{0x68, 0xa}`. */
function goBytes(bytes: Buffer | undefined): GoValue {
  if (bytes === undefined) return new GoValue('[]byte(nil)');
  return new GoValue(`[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(', ')}}`);
}

function requestError(request: string): string | undefined {
  const pem = Buffer.from(request, 'base64').toString('latin1');
  const m = /-----BEGIN ([A-Z ]+)-----/.exec(pem);
  if (m === null) return 'PEM block type must be CERTIFICATE REQUEST';
  if (m[1] !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  if (!pem.includes('-----END CERTIFICATE REQUEST-----')) return 'PEM block type must be CERTIFICATE REQUEST';
  return undefined;
}

function signerNameErrors(name: string): string[] {
  const slash = name.indexOf('/');
  if (slash <= 0 || slash === name.length - 1) {
    return ["must be a fully qualified domain and path of the form 'example.com/signer-name'"];
  }
  return isDNS1123Subdomain(name.slice(0, slash)).map((m) => `validating domain component: ${m}`);
}

/** A CertificateSigningRequest. */
export function validateCSR(csr: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(csr, 'spec') ?? {};
  // kube parses the request whatever it holds, and shows the bytes it could not parse.
  const request = str(spec, 'request');
  const err = requestError(request);
  if (err !== undefined) {
    const absent = spec['request'] === undefined || spec['request'] === null;
    errs.push(invalid('spec.request', goBytes(absent ? undefined : Buffer.from(request, 'base64')), err));
  }
  const signer = str(spec, 'signerName');
  if (signer === '') errs.push(required('spec.signerName'));
  else for (const msg of signerNameErrors(signer)) errs.push(invalid('spec.signerName', signer, msg));
  const usages = strings(spec, 'usages');
  if (usages.length === 0) errs.push(required('spec.usages'));
  const seen = new Set<string>();
  usages.forEach((u, i) => {
    if (!USAGES.includes(u)) errs.push(notSupported(index('spec.usages', i), u, USAGES));
    if (seen.has(u)) errs.push(duplicate(index('spec.usages', i), u));
    seen.add(u);
  });
  const exp = num(spec, 'expirationSeconds');
  if (has(spec, 'expirationSeconds') && exp !== undefined && exp < 600) {
    errs.push(
      invalid(
        child('spec', 'expirationSeconds'),
        exp,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  }
}
