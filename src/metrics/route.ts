/**
 * `GET /metrics`: the server's metrics in the Prometheus text format, as kube-apiserver serves
 * them (who may read them is authorization's call: `system:monitoring` in kube's policy).
 */
import type { FastifyInstance } from 'fastify';
import type { MetricsRegistry } from './registry.js';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Registers `/metrics` on `app`. */
export function installMetricsRoute(app: FastifyInstance, registry: MetricsRegistry): void {
  app.get('/metrics', async (_request, reply) => {
    const text = await registry.expose();
    return reply.type(CONTENT_TYPE).send(text);
  });
}
