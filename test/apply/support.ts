/**
 * Shared fixtures of the apply tests: the schema-backed types of a few kinds and builders of
 * their objects.
 */
import { ObjectTypes, type StructType } from '../../src/apply/index.js';
import { loadSchemas } from '../../src/registry/schema.js';

export const types = new ObjectTypes(loadSchemas());
export const DEPLOYMENT: StructType = types.forKind('k8s.io.api.apps.v1.Deployment');
export const CONFIGMAP: StructType = types.forKind('k8s.io.api.core.v1.ConfigMap');
export const SERVICE: StructType = types.forKind('k8s.io.api.core.v1.Service');
export const POD: StructType = types.forKind('k8s.io.api.core.v1.Pod');

/** A container with ports given as `[containerPort, protocol?]`. */
export function container(
  name: string,
  image: string,
  ports: readonly (readonly [number, string?])[] = [],
): Record<string, unknown> {
  return {
    name,
    image,
    ...(ports.length === 0
      ? {}
      : {
          ports: ports.map(([containerPort, protocol]) => ({
            containerPort,
            ...(protocol === undefined ? {} : { protocol }),
          })),
        }),
  };
}

/** An apps/v1 Deployment manifest. */
export function deployment(
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', ...metadata },
    spec,
  };
}

/** A Deployment spec with these containers. */
export function podSpec(
  containers: readonly Record<string, unknown>[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers, ...extra } },
  };
}

/**
 * The containers of the benchmarks' large Deployment: 50, each with args, two ports, two env
 * vars and resources; `image(i)` names container i's image.
 */
export function fiftyContainers(image: (i: number) => string): Record<string, unknown>[] {
  return Array.from({ length: 50 }, (_, i) => ({
    name: `c${i}`,
    image: image(i),
    args: ['--port', String(8000 + i)],
    ports: [{ containerPort: 8000 + i }, { containerPort: 9000 + i, protocol: 'UDP', name: `m${i}` }],
    env: [
      { name: 'A', value: String(i) },
      { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '50m' } },
  }));
}
