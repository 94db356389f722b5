/**
 * The token cleaner, a client of a bare server (`--controllers=`): expired bootstrap token
 * Secrets in kube-system are deleted, one expiring later is deleted once it expires, and one
 * without an expiration, another type, or another namespace stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Secret } from '../../src/api/types/core-v1.js';
import { SECRETS, isNotFound, type ResourceClient } from '../../src/client/index.js';
import { msUntilExpiry, tokenCleanerController } from '../../src/controllers/token-cleaner/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let secrets: ResourceClient<Secret>;
const b64 = (s: string): string => Buffer.from(s).toString('base64');

beforeAll(async () => {
  env = await startInfraEnv([tokenCleanerController], ['--controllers=tokencleaner'], ['--controllers=']);
  secrets = env.client.resource<Secret>(SECRETS);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

function token(
  name: string,
  expiration: string | undefined,
  namespace = 'kube-system',
  type = 'bootstrap.kubernetes.io/token',
): Secret {
  return {
    metadata: { name, namespace },
    type,
    data: {
      'token-id': b64('abcdef'),
      'token-secret': b64('0123456789abcdef'),
      ...(expiration === undefined ? {} : { expiration: b64(expiration) }),
    },
  };
}

async function exists(name: string, namespace = 'kube-system'): Promise<boolean> {
  try {
    await secrets.get(name, { namespace });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

describe('token cleaner', () => {
  it('reads expirations as kube does', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(msUntilExpiry(token('x', '2026-01-01T00:00:10Z'), now)).toBe(10_000);
    expect(msUntilExpiry(token('x', '2025-12-31T23:59:59Z'), now)).toBe(0);
    expect(msUntilExpiry(token('x', 'tomorrow'), now)).toBe(0);
    expect(msUntilExpiry(token('x', undefined), now)).toBe(-1);
  });

  it('deletes expired bootstrap tokens, and later ones when they expire', async () => {
    await secrets.create(token('bootstrap-token-dead01', new Date(Date.now() - 1000).toISOString()));
    await secrets.create(token('bootstrap-token-soon01', new Date(Date.now() + 2000).toISOString()));
    await secrets.create(token('bootstrap-token-ever01', undefined));
    await secrets.create(
      token('bootstrap-token-other1', new Date(Date.now() - 1000).toISOString(), 'default'),
    );
    await secrets.create(
      token('opaque-expired', new Date(Date.now() - 1000).toISOString(), 'kube-system', 'Opaque'),
    );
    await until('the expired token deleted', async () =>
      (await exists('bootstrap-token-dead01')) ? undefined : true,
    );
    await until('the later token deleted', async () =>
      (await exists('bootstrap-token-soon01')) ? undefined : true,
    );
    expect(await exists('bootstrap-token-ever01')).toBe(true);
    expect(await exists('bootstrap-token-other1', 'default')).toBe(true);
    expect(await exists('opaque-expired')).toBe(true);
    expect(env.errors).toEqual([]);
  });
});
