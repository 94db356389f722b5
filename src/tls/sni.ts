/**
 * `--tls-sni-cert-key`: `certfile,keyfile[:name1,name2,...]`, repeatable. Without names the
 * certificate's own DNS names (and CN) are used. A client's SNI name picks the most specific
 * match (exact before `*.` wildcard); anything else gets the default serving certificate.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** One parsed flag value. */
export interface SniCertKey {
  readonly certFile: string;
  readonly keyFile: string;
  /** Explicit names (empty: the certificate's). */
  readonly names: readonly string[];
}

/** Loaded SNI material. */
export interface SniEntry extends SniCertKey {
  readonly certPem: string;
  readonly keyPem: string;
  /** Lower-cased names it serves. */
  readonly serves: readonly string[];
}

/**
 * Parses one flag value.
 * @throws Error for a malformed value.
 */
export function parseSniCertKey(value: string): SniCertKey {
  const colon = value.indexOf(':');
  const files = (colon < 0 ? value : value.slice(0, colon)).split(',');
  const names =
    colon < 0
      ? []
      : value
          .slice(colon + 1)
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '');
  if (files.length !== 2 || files.some((f) => f.trim() === '')) {
    throw new Error(
      `--tls-sni-cert-key ${JSON.stringify(value)}: expected certfile,keyfile[:domain1,domain2]`,
    );
  }
  return { certFile: (files[0] as string).trim(), keyFile: (files[1] as string).trim(), names };
}

function certNames(cert: X509Certificate): string[] {
  const names: string[] = [];
  for (const part of (cert.subjectAltName ?? '').split(',')) {
    const t = part.trim();
    if (t.startsWith('DNS:')) names.push(t.slice(4));
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject)?.[1];
  if (cn !== undefined && names.length === 0) names.push(cn);
  return names;
}

/**
 * Reads an entry's files.
 * @throws Error naming the files when unreadable or mismatched.
 */
export function loadSni(entry: SniCertKey): SniEntry {
  let certPem: string;
  let keyPem: string;
  try {
    certPem = readFileSync(entry.certFile, 'utf8');
    keyPem = readFileSync(entry.keyFile, 'utf8');
  } catch (err) {
    throw new Error(`--tls-sni-cert-key: unable to read ${entry.certFile} or ${entry.keyFile}`, {
      cause: err,
    });
  }
  const cert = new X509Certificate(certPem);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) {
    throw new Error(`--tls-sni-cert-key: ${entry.keyFile} does not match ${entry.certFile}`);
  }
  const serves = (entry.names.length > 0 ? entry.names : certNames(cert)).map((n) => n.toLowerCase());
  return { ...entry, certPem, keyPem, serves };
}

/** The entry serving `servername`, if any. */
export function pickSni(entries: readonly SniEntry[], servername: string): SniEntry | undefined {
  const name = servername.toLowerCase();
  const exact = entries.find((e) => e.serves.includes(name));
  if (exact !== undefined) return exact;
  const dot = name.indexOf('.');
  if (dot < 0) return undefined;
  const wildcard = `*${name.slice(dot)}`;
  return entries.find((e) => e.serves.includes(wildcard));
}
