/**
 * Per-controller identities (`--use-service-account-credentials`), as kube's
 * `DynamicControllerClientBuilder`: each controller acts as the service account
 * `kube-system/<serviceAccount>`, created when missing, with a bound token from the TokenRequest
 * API. Tokens last an hour and are renewed at 80 % of their life. They are held in memory only
 * (a manager killed before its `close` leaves no credentials behind), and the client asks for the
 * current one on each request, so a renewal needs no new connection.
 */
import { Client, isAlreadyExists, SERVICE_ACCOUNTS, type ClientConfig } from '../client/index.js';
import type { ServiceAccount } from '../api/types/core-v1.js';
import type { TokenRequest } from '../api/types/authentication-v1.js';

const NAMESPACE = 'kube-system';
const TOKEN_SECONDS = 3600;

/** Makes clients; `close` stops renewals and forgets the tokens. */
export interface ControllerClients {
  /** The client of `serviceAccount` (undefined: the manager's own identity). */
  clientFor(serviceAccount: string | undefined): Promise<Client>;
  close(): Promise<void>;
}

/** One identity for every controller: the manager's. */
export function sharedIdentity(client: Client): ControllerClients {
  return { clientFor: () => Promise.resolve(client), close: () => Promise.resolve() };
}

/**
 * Service-account identities requested through `root` (the manager's client, which needs
 * kube's `system:kube-controller-manager` rights: create service accounts and tokens).
 */
export async function serviceAccountIdentities(
  root: Client,
  rootConfig: ClientConfig,
  onError: (message: string, err: unknown) => void,
): Promise<ControllerClients> {
  const tokens = new Map<string, string>();
  const timers = new Set<NodeJS.Timeout>();
  const clients = new Map<string, Promise<Client>>();
  const accounts = root.resource<ServiceAccount>(SERVICE_ACCOUNTS);

  const writeToken = async (sa: string): Promise<number> => {
    const request: TokenRequest = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {},
      spec: { audiences: [], expirationSeconds: TOKEN_SECONDS },
    };
    const answer = await accounts.createSubresource<TokenRequest>(sa, 'token', request, {
      namespace: NAMESPACE,
    });
    const token = answer.status?.token;
    if (token === undefined || token === '')
      throw new Error(`the token request of ${NAMESPACE}/${sa} returned no token`);
    tokens.set(sa, token);
    const expires = Date.parse(answer.status?.expirationTimestamp ?? '');
    return Number.isFinite(expires) ? Math.max(1_000, (expires - Date.now()) * 0.8) : TOKEN_SECONDS * 800;
  };
  const renewLater = (sa: string, afterMs: number): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      writeToken(sa).then(
        (next) => renewLater(sa, next),
        (err: unknown) => {
          onError(`renewing the token of ${NAMESPACE}/${sa}`, err);
          renewLater(sa, 10_000);
        },
      );
    }, afterMs);
    timer.unref();
    timers.add(timer);
  };
  const make = async (sa: string): Promise<Client> => {
    try {
      await accounts.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: sa, namespace: NAMESPACE },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    renewLater(sa, await writeToken(sa));
    // The manager's own credentials are dropped, file-based ones too: a client certificate would
    // authenticate before the token.
    const {
      certData: _c,
      keyData: _k,
      certFile: _cf,
      keyFile: _kf,
      token: _t,
      tokenFile: _f,
      tokenSource: _s,
      ...rest
    } = rootConfig;
    return new Client({ ...rest, tokenSource: () => tokens.get(sa) ?? '' });
  };
  return {
    clientFor(sa) {
      if (sa === undefined) return Promise.resolve(root);
      let c = clients.get(sa);
      if (c === undefined) {
        c = make(sa);
        clients.set(sa, c);
        c.catch(() => clients.delete(sa));
      }
      return c;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const made = await Promise.allSettled(clients.values());
      for (const r of made) if (r.status === 'fulfilled') await r.value.close();
      tokens.clear();
    },
  };
}
