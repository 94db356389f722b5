/** The API server's binding endpoints (kube's BindingREST), served through the custom endpoints map. */
import { badRequest } from '../api/errors.js';
import { isJsonObject, type JsonObject } from '../api/object.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import { bindPod } from '../resource/binding.js';

function obj(v: unknown): JsonObject {
  return isJsonObject(v) ? v : {};
}

/**
 * The custom endpoints: `pods/binding` (the pod named in the path) and the legacy `bindings`
 * collection (the pod named in the Binding's metadata).
 */
export function bindingEndpoints(): [string, CustomEndpoint][] {
  const dryRunOf = (query: unknown): boolean => obj(query)['dryRun'] === 'All';
  return [
    [
      '/pods/binding',
      {
        methods: ['POST'],
        messageType: 'k8s.io.api.core.v1.Binding',
        handle: ({ ctx, target, body, request }) => bindPod(ctx, target, body, dryRunOf(request.query)),
      },
    ],
    [
      '/bindings',
      {
        methods: ['POST'],
        messageType: 'k8s.io.api.core.v1.Binding',
        handle: ({ ctx, target, body, request }) => {
          const podType = ctx.registry.byResource('', 'v1', 'pods');
          if (podType === undefined) throw badRequest('pods are not served');
          const name = obj(obj(body)['metadata'])['name'];
          if (typeof name !== 'string' || name === '') throw badRequest('name is required');
          return bindPod(
            ctx,
            { type: podType, namespace: target.namespace, name, subresource: 'binding' },
            body,
            dryRunOf(request.query),
          );
        },
      },
    ],
  ];
}
