/**
 * The TLS settings of the listener and their reloading: the serving certificate (or the
 * generated one), `--tls-sni-cert-key` pairs chosen by SNI, the CAs client certificates may
 * chain to (every certificate authenticator's, verified again per authenticator in
 * src/authn/), `--tls-min-version` and `--tls-cipher-suites`. When one of the files changes on
 * disk the listener takes the new material for new connections (`setSecureContext`), without a
 * restart; a change that does not load (half-written file, key mismatch) keeps the old
 * material and is reported.
 */
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import type { CaBundle } from '../authn/ca-bundle.js';
import { loadSni, pickSni, type SniCertKey, type SniEntry } from './sni.js';

/** What the listener serves with. */
export interface ServingTlsOptions {
  readonly certPem: string;
  readonly keyPem: string;
  /** `--tls-cert-file`/`--tls-private-key-file` (reloaded); undefined for generated material. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Every CA bundle a client certificate may chain to. */
  readonly caBundles: readonly CaBundle[];
  readonly minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** OpenSSL cipher string. */
  readonly ciphers?: string;
  readonly sni: readonly SniCertKey[];
}

/** The part of https options this module owns. */
export interface ListenerTlsOptions {
  readonly key: string;
  readonly cert: string;
  readonly ca: string[];
  readonly minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  readonly ciphers?: string;
  readonly SNICallback?: (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;
}

/** Something with `setSecureContext` (a TLS or HTTP/2 secure server). */
export interface SecureContextTarget {
  setSecureContext(options: SecureContextOptions): void;
}

/** See the module comment. */
export class ServingTls {
  readonly #o: ServingTlsOptions;
  #certPem: string;
  #keyPem: string;
  #sni: readonly SniEntry[];
  #sniContexts = new Map<SniEntry, SecureContext>();
  #target: SecureContextTarget | undefined;
  #watched: [string, (cur: Stats, prev: Stats) => void][] = [];

  /** @throws Error when an SNI pair does not load. */
  constructor(options: ServingTlsOptions) {
    this.#o = options;
    this.#certPem = options.certPem;
    this.#keyPem = options.keyPem;
    this.#sni = options.sni.map(loadSni);
  }

  #cas(): string[] {
    return this.#o.caBundles.flatMap((b) => [...b.pems]);
  }

  #common(): { ca: string[]; minVersion?: NonNullable<ListenerTlsOptions['minVersion']>; ciphers?: string } {
    return {
      ca: this.#cas(),
      ...(this.#o.minVersion === undefined ? {} : { minVersion: this.#o.minVersion }),
      ...(this.#o.ciphers === undefined ? {} : { ciphers: this.#o.ciphers }),
    };
  }

  /** Options for the listener. */
  listenerOptions(): ListenerTlsOptions {
    return {
      key: this.#keyPem,
      cert: this.#certPem,
      ...this.#common(),
      ...(this.#sni.length === 0 ? {} : { SNICallback: (name, cb) => cb(null, this.#sniContext(name)) }),
    };
  }

  #sniContext(servername: string): SecureContext | undefined {
    const entry = pickSni(this.#sni, servername);
    if (entry === undefined) return undefined;
    let ctx = this.#sniContexts.get(entry);
    if (ctx === undefined) {
      ctx = createSecureContext({ key: entry.keyPem, cert: entry.certPem, ...this.#common() });
      this.#sniContexts.set(entry, ctx);
    }
    return ctx;
  }

  /**
   * Re-reads every file and applies the result to the attached listener.
   * @throws Error when something does not load (nothing changes then).
   */
  reload(): void {
    for (const b of this.#o.caBundles) b.reload();
    if (this.#o.certFile !== undefined && this.#o.keyFile !== undefined) {
      const cert = readFileSync(this.#o.certFile, 'utf8');
      const key = readFileSync(this.#o.keyFile, 'utf8');
      // Throws for a mismatched or unparsable pair before anything is replaced.
      createSecureContext({ key, cert });
      this.#certPem = cert;
      this.#keyPem = key;
    }
    this.#sni = this.#o.sni.map(loadSni);
    this.#sniContexts = new Map();
    this.#target?.setSecureContext({ key: this.#keyPem, cert: this.#certPem, ...this.#common() });
  }

  /** Files whose change triggers a reload. */
  files(): string[] {
    const files = this.#o.caBundles.flatMap((b) => b.files);
    if (this.#o.certFile !== undefined) files.push(this.#o.certFile);
    if (this.#o.keyFile !== undefined) files.push(this.#o.keyFile);
    for (const s of this.#o.sni) files.push(s.certFile, s.keyFile);
    return [...new Set(files)];
  }

  /** Applies reloads to `target` and polls the files every `intervalMs`. */
  watch(target: SecureContextTarget, intervalMs: number, onError: (err: unknown) => void): void {
    this.#target = target;
    for (const file of this.files()) {
      const listener = (cur: Stats, prev: Stats): void => {
        if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size && cur.ino === prev.ino) return;
        try {
          this.reload();
        } catch (err) {
          onError(err);
        }
      };
      watchFile(file, { interval: intervalMs, persistent: false }, listener);
      this.#watched.push([file, listener]);
    }
  }

  /** Stops polling. */
  stop(): void {
    for (const [file, listener] of this.#watched) unwatchFile(file, listener);
    this.#watched = [];
  }
}
