import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, forbidden } from '../../src/api/errors.js';
import type { RequestAuthenticator } from '../../src/authn/request-authenticator.js';
import {
  installRequestPipeline,
  SLOT_ORDER,
  type PipelineSlots,
  type PipelineStep,
} from '../../src/server/pipeline.js';

// The steps after authentication run in one hook; these pin down what fastify's one hook per
// step used to guarantee: order, waiting for a step's promise, and stopping at the first error.

const authenticator = {
  authenticate: () => ({ name: 'alice', uid: '', groups: ['system:authenticated'], extra: {} }),
} as unknown as RequestAuthenticator;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(slots: PipelineSlots): Promise<FastifyInstance> {
  app = Fastify();
  installRequestPipeline(app, authenticator, slots);
  app.setErrorHandler((err: unknown, _request, reply) => {
    const code = err instanceof ApiError ? err.code : 500;
    void reply.code(code).send({ message: err instanceof Error ? err.message : String(err) });
  });
  app.get('/api/v1/namespaces/default/configmaps/x', () => ({ ok: true }));
  await app.ready();
  return app;
}

const get = (a: FastifyInstance) =>
  a.inject({ method: 'GET', url: '/api/v1/namespaces/default/configmaps/x' });

describe('request pipeline slots', () => {
  it('runs every slot in order, waiting for the asynchronous ones', async () => {
    const ran: string[] = [];
    const slots: Record<string, PipelineStep> = {};
    SLOT_ORDER.forEach((name, i) => {
      slots[name] =
        i % 2 === 0
          ? () => {
              ran.push(name);
            }
          : async () => {
              await new Promise((r) => setTimeout(r, 5));
              ran.push(name);
            };
    });
    const res = await get(await serve(slots));
    expect(res.statusCode).toBe(200);
    expect(ran).toEqual([...SLOT_ORDER]);
  });

  it('stops at a step that throws, and answers its error', async () => {
    const ran: string[] = [];
    const res = await get(
      await serve({
        audit: () => void ran.push('audit'),
        flowControl: () => {
          throw forbidden('no seats for you');
        },
        authorization: () => void ran.push('authorization'),
      }),
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ message: 'no seats for you' });
    expect(ran).toEqual(['audit']);
  });

  it('stops at a step whose promise rejects, and answers its error', async () => {
    const ran: string[] = [];
    const res = await get(
      await serve({
        audit: async () => {
          await Promise.resolve();
          throw forbidden('rejected later');
        },
        flowControl: () => void ran.push('flowControl'),
      }),
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ message: 'rejected later' });
    expect(ran).toEqual([]);
  });

  it('sees request info and the user in every step', async () => {
    const seen: string[] = [];
    await get(
      await serve({
        authorization: (request) => void seen.push(`${request.user.name} ${request.requestInfo.verb}`),
      }),
    );
    expect(seen).toEqual(['alice get']);
  });
});
