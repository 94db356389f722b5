/**
 * Resolves the path below `/api/v1/` or `/apis/{group}/{version}/` to a resource type, namespace,
 * name and subresource, as kube-apiserver's routes do:
 *
 * | segments                                   | meaning                                         |
 * |--------------------------------------------|-------------------------------------------------|
 * | `{plural}`                                 | collection (cluster-scoped, or all namespaces)  |
 * | `{plural}/{name}[/{sub}]`                  | cluster-scoped item (namespaces/{name} too)     |
 * | `namespaces/{ns}/{plural}`                 | namespaced collection                           |
 * | `namespaces/{ns}/{plural}/{name}[/{sub}]`  | namespaced item                                 |
 *
 * Anything else, an unknown resource, or a subresource the type does not serve is undefined
 * (the caller answers kube's 404).
 */
import { endpointSubresources, type Registry } from '../registry/types.js';
import type { Target } from './context.js';

/** Subresources the registry lists for the type, and those endpoints of their own serve. */
function servesSubresource(target: Target, sub: string): boolean {
  const { type } = target;
  return (
    (type.subresources as readonly string[]).includes(sub) ||
    (endpointSubresources(type) as readonly string[]).includes(sub)
  );
}

function valid(segment: string | undefined): segment is string {
  return segment !== undefined && segment !== '' && segment !== '.' && segment !== '..';
}

/** The target of `segments` in `group`/`version`, or undefined for kube's 404. */
export function resolveTarget(
  registry: Registry,
  group: string,
  version: string,
  segments: readonly string[],
): Target | undefined {
  if (segments.length === 0 || !segments.every(valid)) return undefined;
  const [first, second, third, fourth, fifth] = segments;
  if (first === 'namespaces' && segments.length >= 3 && third !== undefined) {
    const type = registry.byResource(group, version, third);
    if (type?.namespaced === true && second !== undefined && segments.length <= 5) {
      const target: Target = { type, namespace: second, name: fourth, subresource: fifth };
      if (fifth !== undefined && !servesSubresource(target, fifth)) return undefined;
      return target;
    }
  }
  if (first === undefined || segments.length > 3) return undefined;
  const type = registry.byResource(group, version, first);
  if (type === undefined) return undefined;
  if (type.namespaced && segments.length > 1) return undefined;
  const target: Target = { type, namespace: undefined, name: second, subresource: third };
  if (third !== undefined && !servesSubresource(target, third)) return undefined;
  return target;
}
