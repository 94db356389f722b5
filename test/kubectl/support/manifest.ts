/**
 * The fixture manifests and what kubectl prints for their objects, derived from the manifests
 * and the registry (so the suite follows the fixture when it grows).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { loadRegistry } from '../../../src/registry/registry.js';

/** Path of a file under `fixtures/manifests/`. */
export function manifestPath(name: string): string {
  return fileURLToPath(new URL(`../../../fixtures/manifests/${name}`, import.meta.url));
}

/** `fixtures/manifests/app.yaml`: the multi-document application the suite applies. */
export const APP_MANIFEST = manifestPath('app.yaml');
/** A Deployment that validation must refuse (negative replicas, selector not matching the template). */
export const INVALID_MANIFEST = manifestPath('invalid-deployment.yaml');

/** One object of a manifest, as kubectl names it. */
export interface ManifestObject {
  readonly kind: string;
  readonly group: string;
  readonly name: string;
  readonly namespace: string | undefined;
  /** kubectl's `<resource>[.<group>]/<name>` (`deployment.apps/web`, `namespace/shop`). */
  readonly ref: string;
  /** The resource kubectl takes on the command line (`deployments.apps`, `configmaps`). */
  readonly resource: string;
}

/** The objects of a manifest, in document order. */
export function manifestObjects(path: string): ManifestObject[] {
  const registry = loadRegistry();
  return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    const obj = doc.toJS() as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace?: string };
    };
    const slash = obj.apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : obj.apiVersion.slice(0, slash);
    const version = obj.apiVersion.slice(slash + 1);
    const type = registry.byKind(group, version, obj.kind);
    if (type === undefined) throw new Error(`${path}: ${obj.apiVersion} ${obj.kind} is not served`);
    const qualifier = group === '' ? '' : `.${group}`;
    return {
      kind: obj.kind,
      group,
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      ref: `${type.singular}${qualifier}/${obj.metadata.name}`,
      resource: `${type.plural}${qualifier}`,
    };
  });
}

/**
 * True for what the cluster itself puts in every namespace (the `default` ServiceAccount and the
 * `kube-root-ca.crt` ConfigMap, as kube's controllers do): not part of any manifest.
 */
export function isClusterMade(item: unknown): boolean {
  if (typeof item !== 'object' || item === null) return false;
  const o = item as { kind?: unknown; metadata?: { name?: unknown } };
  const name = o.metadata?.name;
  return (
    (o.kind === 'ServiceAccount' && name === 'default') ||
    (o.kind === 'ConfigMap' && name === 'kube-root-ca.crt')
  );
}
