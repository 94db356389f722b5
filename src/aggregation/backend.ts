/**
 * Connections to the servers behind remote APIServices: HTTPS to a ready endpoint of the
 * APIService's Service (as kube-apiserver with `--enable-aggregator-routing`: Capstan has no
 * kube-proxy), the TLS server name `<service>.<namespace>.svc`, the APIService's `caBundle` as
 * the trust (or none with `insecureSkipTLSVerify`), and the front-proxy client certificate
 * (`--proxy-client-cert-file`, `--proxy-client-key-file`) as the aggregator's identity.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { describe as describeCallError } from '../admission/webhook/client.js';
import type { JsonObject } from '../api/object.js';
import { isJsonObject } from '../api/object.js';
import {
  resolveServiceEndpoint,
  type Endpoint,
  type ServiceObjects,
} from '../admission/webhook/service-resolver.js';

/** The front-proxy client certificate and key (PEM), when configured. */
export interface ProxyClientCert {
  readonly certPem: string;
  readonly keyPem: string;
}

/** The `spec` fields of an APIService that say where and how to reach its server. */
export interface RemoteSpec {
  readonly group: string;
  readonly version: string;
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly caBundle: string | undefined;
  readonly insecureSkipTLSVerify: boolean;
}

/** The remote spec of an APIService object, or undefined for a local one. */
export function remoteSpecOf(obj: JsonObject): RemoteSpec | undefined {
  const spec = isJsonObject(obj['spec']) ? obj['spec'] : {};
  const svc = spec['service'];
  if (!isJsonObject(svc)) return undefined;
  const ca = typeof spec['caBundle'] === 'string' && spec['caBundle'] !== '' ? spec['caBundle'] : undefined;
  return {
    group: typeof spec['group'] === 'string' ? spec['group'] : '',
    version: typeof spec['version'] === 'string' ? spec['version'] : '',
    namespace: typeof svc['namespace'] === 'string' ? svc['namespace'] : '',
    name: typeof svc['name'] === 'string' ? svc['name'] : '',
    port: typeof svc['port'] === 'number' ? svc['port'] : 443,
    // caBundle is bytes: base64 on the wire, PEM once decoded.
    caBundle: ca === undefined ? undefined : Buffer.from(ca, 'base64').toString('utf8'),
    insecureSkipTLSVerify: spec['insecureSkipTLSVerify'] === true,
  };
}

/** A failed discovery GET: `url` is the endpoint's, `message` the cause as Go words it. */
export class DiscoveryCheckError extends Error {
  constructor(
    readonly url: string,
    message: string,
  ) {
    super(message);
    this.name = 'DiscoveryCheckError';
  }
}

/** Reaches the servers of remote APIServices. */
export class Backends {
  readonly #services: ServiceObjects;
  readonly #clientCert: () => ProxyClientCert | undefined;

  constructor(services: ServiceObjects, clientCert: () => ProxyClientCert | undefined) {
    this.#services = services;
    this.#clientCert = clientCert;
  }

  /** A ready endpoint of the spec's Service. @throws ResolveError */
  resolve(spec: RemoteSpec): Promise<Endpoint> {
    return resolveServiceEndpoint(this.#services, spec.namespace, spec.name, spec.port);
  }

  /** Starts a request to `endpoint`; the caller writes the body and ends it. */
  request(
    spec: RemoteSpec,
    endpoint: Endpoint,
    method: string,
    path: string,
    headers: OutgoingHttpHeaders,
    onResponse: (res: IncomingMessage) => void,
  ): ClientRequest {
    const cert = this.#clientCert();
    const options: RequestOptions = {
      host: endpoint.host,
      port: endpoint.port,
      method,
      path,
      headers,
      servername: `${spec.name}.${spec.namespace}.svc`,
      rejectUnauthorized: !spec.insecureSkipTLSVerify,
      ...(spec.caBundle === undefined ? {} : { ca: spec.caBundle }),
      ...(cert === undefined ? {} : { cert: cert.certPem, key: cert.keyPem }),
      agent: false,
    };
    return httpsRequest(options, onResponse);
  }

  /**
   * GETs `path` from `endpoint` (resolved by {@link resolve}) and parses the JSON answer (the
   * availability check). @throws DiscoveryCheckError on a failed connection or a non-2xx answer
   */
  async getJson(spec: RemoteSpec, endpoint: Endpoint, path: string, timeoutMs: number): Promise<unknown> {
    const addr = `${endpoint.host}:${endpoint.port}`;
    const url = `https://${addr}${path}`;
    return new Promise((resolve, reject) => {
      const req = this.request(spec, endpoint, 'GET', path, { accept: 'application/json' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status >= 300) {
            reject(new DiscoveryCheckError(url, `bad status from ${url}: ${status}`));
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new DiscoveryCheckError(url, `${url}: the answer is not JSON`));
          }
        });
      });
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error('Client.Timeout exceeded while awaiting headers')),
      );
      req.on('error', (err) =>
        reject(new DiscoveryCheckError(url, `Get "${url}": ${describeCallError(err, addr)}`)),
      );
      req.end();
    });
  }
}
