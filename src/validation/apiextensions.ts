/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition: the parts kube checks before a CRD can
 * serve anything (names, group, scope, versions with exactly one storage version, a schema per
 * version with an object root, conversion strategy) and the update rules that keep served
 * data readable. Structural-schema rules beyond the root are not checked here.
 */
import { IMMUTABLE, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isDNS1035Label, isDNS1123Subdomain } from './formats.js';
import { obj, objects, str, strings, type JsonObject } from './json.js';
import { duplicates } from './meta.js';
import { child, index } from './path.js';

function validateNames(names: JsonObject, path: string, errs: FieldError[]): void {
  const label = (k: string, v: string): void => {
    const msgs = isDNS1035Label(v);
    if (v !== '' && msgs.length > 0) errs.push(invalid(child(path, k), v, msgs.join(',')));
  };
  const mixedCase = (k: string, v: string): void => {
    const msgs = isDNS1035Label(v.toLowerCase());
    if (v !== '' && msgs.length > 0) {
      errs.push(
        invalid(child(path, k), v, `may have mixed case, but should otherwise match: ${msgs.join(',')}`),
      );
    }
  };
  const plural = str(names, 'plural');
  if (plural === '') errs.push(required(child(path, 'plural')));
  label('plural', plural);
  label('singular', str(names, 'singular'));
  const kind = str(names, 'kind');
  if (kind === '') errs.push(required(child(path, 'kind')));
  mixedCase('kind', kind);
  const listKind = str(names, 'listKind');
  if (listKind === '') errs.push(required(child(path, 'listKind')));
  mixedCase('listKind', listKind);
  if (kind !== '' && listKind === kind)
    errs.push(invalid(child(path, 'listKind'), listKind, 'kind and listKind may not be the same'));
  strings(names, 'shortNames').forEach((s, i) => {
    const msgs = isDNS1035Label(s);
    if (msgs.length > 0) errs.push(invalid(index(child(path, 'shortNames'), i), s, msgs.join(',')));
  });
}

/** A CustomResourceDefinition (create when `old` is undefined). */
export function validateCRD(crd: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(crd, 'spec') ?? {};
  const names = obj(spec, 'names') ?? {};
  const group = str(spec, 'group');
  const name = str(obj(crd, 'metadata'), 'name');
  if (name !== `${str(names, 'plural')}.${group}`) {
    errs.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (group === '') {
    errs.push(required('spec.group'));
  } else {
    for (const msg of isDNS1123Subdomain(group)) errs.push(invalid('spec.group', group, msg));
    if (group.split('.').length < 2)
      errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = str(spec, 'scope');
  if (scope === '') errs.push(required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    errs.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  validateNames(names, 'spec.names', errs);
  const versions = objects(spec, 'versions');
  if (versions.length === 0)
    errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  let storage = 0;
  versions.forEach((v, i) => {
    const p = index('spec.versions', i);
    const vname = str(v, 'name');
    if (vname === '') errs.push(required(child(p, 'name')));
    else for (const msg of isDNS1035Label(vname)) errs.push(invalid(child(p, 'name'), vname, msg));
    if (v['storage'] === true) storage++;
    const schema = obj(obj(v, 'schema'), 'openAPIV3Schema');
    if (schema === undefined) {
      errs.push(required(child(p, 'schema', 'openAPIV3Schema'), 'schemas are required'));
    } else if (str(schema, 'type') !== 'object') {
      const t = str(schema, 'type');
      if (t === '')
        errs.push(required(child(p, 'schema', 'openAPIV3Schema', 'type'), 'must not be empty at the root'));
      else errs.push(invalid(child(p, 'schema', 'openAPIV3Schema', 'type'), t, 'must be object at the root'));
    }
  });
  if (versions.length > 0 && storage !== 1) {
    errs.push(
      invalid(
        'spec.versions',
        versions.map((v) => str(v, 'name')),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  errs.push(
    ...duplicates(
      versions.map((v) => str(v, 'name')),
      'spec.versions',
    ),
  );
  if (versions.length > 0 && !versions.some((v) => v['served'] === true)) {
    errs.push(
      invalid(
        'spec.versions',
        versions.map((v) => str(v, 'name')),
        'must have at least one version marked as served',
      ),
    );
  }
  const conversion = obj(spec, 'conversion');
  const strategy = str(conversion, 'strategy');
  if (strategy !== 'None' && strategy !== 'Webhook')
    errs.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  if (strategy === 'Webhook') {
    if (obj(obj(conversion, 'webhook'), 'clientConfig') === undefined) {
      errs.push(required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
    }
    if (strings(obj(conversion, 'webhook'), 'conversionReviewVersions').length === 0) {
      errs.push(
        required('spec.conversion.webhook.conversionReviewVersions', 'must specify one of v1, v1beta1'),
      );
    }
  }
  if (old !== undefined) {
    const oldSpec = obj(old, 'spec') ?? {};
    if (str(oldSpec, 'group') !== group) errs.push(invalid('spec.group', group, IMMUTABLE));
    if (str(obj(oldSpec, 'names'), 'plural') !== str(names, 'plural'))
      errs.push(invalid('spec.names.plural', str(names, 'plural'), IMMUTABLE));
    const stored = strings(obj(old, 'status'), 'storedVersions');
    const present = new Set(versions.map((v) => str(v, 'name')));
    stored.forEach((s) => {
      if (!present.has(s))
        errs.push(invalid('status.storedVersions', stored, `must appear in spec.versions`));
    });
  }
}
