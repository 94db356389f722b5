/**
 * Per-controller identities (`--use-service-account-credentials`), as kube's
 * `DynamicControllerClientBuilder`: each controller acts as the service account
 * `kube-system/<serviceAccount>`, created when missing, with a bound token from the TokenRequest
 * API. Tokens last an hour and are renewed at 80 % of their life; the client reads them from a
 * private token file, so a renewal needs no new connection.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, isAlreadyExists, SERVICE_ACCOUNTS, type ClientConfig } from '../client/index.js';
import type { ServiceAccount } from '../api/types/core-v1.js';
import type { TokenRequest } from '../api/types/authentication-v1.js';

const NAMESPACE = 'kube-system';
const TOKEN_SECONDS = 3600;

/** Makes clients; `close` stops renewals and removes the token files. */
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
  const dir = await mkdtemp(join(tmpdir(), 'capstan-cm-tokens-'));
  await chmod(dir, 0o700);
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
    await writeFile(join(dir, sa), token, { mode: 0o600 });
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
    const { certData: _c, keyData: _k, token: _t, ...rest } = rootConfig;
    return new Client({ ...rest, tokenFile: join(dir, sa) });
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
      await rm(dir, { recursive: true, force: true });
    },
  };
}
