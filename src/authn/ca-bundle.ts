/**
 * A set of trusted certificate authorities read from PEM files (and PEM text), reloadable when
 * the files change, and the question each certificate authenticator asks of it: does this
 * verified client chain lead to one of my CAs? The TLS listener trusts the union of every
 * authenticator's CAs; each authenticator checks its own in code (a proxy certificate must not
 * log in as a user, nor a user certificate assert proxy headers).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Splits a PEM bundle into its certificates. */
export function splitPem(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** A PEM source: a file (re-read on reload) or fixed text. */
export type PemSource = { readonly file: string } | { readonly pem: string };

/** Thrown for an unreadable or certificate-less CA file; names the file, never its content. */
export class CaBundleError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CaBundleError';
  }
}

function readSource(source: PemSource): string[] {
  if ('pem' in source) return splitPem(source.pem);
  let text: string;
  try {
    text = readFileSync(source.file, 'utf8');
  } catch (err) {
    throw new CaBundleError(`unable to read CA file ${JSON.stringify(source.file)}`, { cause: err });
  }
  const pems = splitPem(text);
  if (pems.length === 0)
    throw new CaBundleError(`CA file ${JSON.stringify(source.file)} holds no certificate`);
  return pems;
}

/** See the module comment. */
export class CaBundle {
  readonly #sources: readonly PemSource[];
  #pems: readonly string[] = [];
  #certs: readonly X509Certificate[] = [];
  #generation = 0;

  /** @throws CaBundleError when a file is unreadable or holds no certificate. */
  constructor(sources: readonly PemSource[]) {
    this.#sources = sources;
    this.reload();
  }

  /** The files it reads (for change watching). */
  get files(): string[] {
    return this.#sources.flatMap((s) => ('file' in s ? [s.file] : []));
  }

  /** The CA certificates' PEMs (for the listener's trust list). */
  get pems(): readonly string[] {
    return this.#pems;
  }

  /** Bumped on every successful reload (connection caches compare it). */
  get generation(): number {
    return this.#generation;
  }

  get empty(): boolean {
    return this.#certs.length === 0;
  }

  /**
   * Re-reads the files; on failure the previous CAs stay in force.
   * @throws CaBundleError (the bundle is unchanged).
   */
  reload(): void {
    const pems = this.#sources.flatMap(readSource);
    const certs = pems.map((p) => {
      try {
        return new X509Certificate(p);
      } catch (err) {
        throw new CaBundleError('a CA file holds an unparsable certificate', { cause: err });
      }
    });
    this.#pems = Object.freeze(pems);
    this.#certs = Object.freeze(certs);
    this.#generation++;
  }

  /** True when some certificate of `chain` (leaf first) was issued and signed by one of these CAs. */
  anchors(chain: readonly X509Certificate[]): boolean {
    for (const c of chain) {
      for (const ca of this.#certs) {
        if (c.fingerprint256 === ca.fingerprint256) return true;
        if (c.checkIssued(ca) && c.verify(ca.publicKey)) return true;
      }
    }
    return false;
  }
}
