/**
 * admissionregistration.k8s.io/v1 Mutating- and ValidatingWebhookConfiguration
 * (`ValidateMutatingWebhookConfiguration` and friends, v1 rules: `sideEffects` and
 * `admissionReviewVersions` required).
 */
import { duplicate, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isDNS1123Subdomain, isValidPortNum } from './formats.js';
import { type JsonObject, num, obj, objects, str, strings } from './json.js';
import { duplicates, validateLabelSelector } from './meta.js';
import { validateNamedRules } from './admission-policy.js';
import { child, index } from './path.js';

const REVIEW_VERSIONS = ['v1', 'v1beta1'];

function validateClientConfig(cc: JsonObject, path: string, errs: FieldError[]): void {
  const url = cc['url'];
  const service = obj(cc, 'service');
  if (typeof url === 'string' && service !== undefined) {
    errs.push(required(path, 'exactly one of url or service is required'));
    return;
  }
  if (typeof url === 'string') {
    const p = child(path, 'url');
    let u: URL | undefined;
    try {
      u = new URL(url);
    } catch {
      errs.push(invalid(p, url, 'host must be specified'));
    }
    if (u !== undefined) {
      if (u.protocol !== 'https:')
        errs.push(invalid(p, u.protocol.replace(':', ''), "'https' is the only allowed URL scheme"));
      if (u.hostname === '') errs.push(invalid(p, url, 'host must be specified'));
      if (u.username !== '' || u.password !== '')
        errs.push(invalid(p, url, 'user information is not permitted in the URL'));
      if (u.hash !== '' || url.includes('#'))
        errs.push(invalid(p, url, 'fragments are not permitted in the URL'));
      if (u.search !== '') errs.push(invalid(p, url, 'query parameters are not permitted in the URL'));
    }
    return;
  }
  if (service === undefined) {
    errs.push(required(path, 'exactly one of url or service is required'));
    return;
  }
  const sp = child(path, 'service');
  if (str(service, 'name') === '') errs.push(required(child(sp, 'name'), 'service name is required'));
  if (str(service, 'namespace') === '')
    errs.push(required(child(sp, 'namespace'), 'service namespace is required'));
  const port = num(service, 'port');
  if (port !== undefined)
    for (const msg of isValidPortNum(port))
      errs.push(invalid(child(sp, 'port'), port, `port is not valid: ${msg}`));
  const svcPath = service['path'];
  if (typeof svcPath === 'string' && svcPath !== '' && !svcPath.startsWith('/')) {
    errs.push(invalid(child(sp, 'path'), svcPath, "must start with a '/'"));
  }
}

function validateWebhook(w: JsonObject, mutating: boolean, path: string, errs: FieldError[]): void {
  const name = str(w, 'name');
  if (name === '') {
    errs.push(required(child(path, 'name')));
  } else {
    const msgs = isDNS1123Subdomain(name);
    for (const msg of msgs) errs.push(invalid(child(path, 'name'), name, msg));
    if (msgs.length === 0 && name.split('.').length < 3) {
      errs.push(
        invalid(
          child(path, 'name'),
          name,
          'should be a domain with at least three segments separated by dots',
        ),
      );
    }
  }
  validateNamedRules(objects(w, 'rules'), child(path, 'rules'), errs);
  const fp = w['failurePolicy'];
  if (fp !== undefined && fp !== null && fp !== 'Fail' && fp !== 'Ignore')
    errs.push(notSupported(child(path, 'failurePolicy'), fp, ['Fail', 'Ignore']));
  const mp = w['matchPolicy'];
  if (mp !== undefined && mp !== null && mp !== 'Equivalent' && mp !== 'Exact')
    errs.push(notSupported(child(path, 'matchPolicy'), mp, ['Equivalent', 'Exact']));
  const se = w['sideEffects'];
  if (se === undefined || se === null)
    errs.push(required(child(path, 'sideEffects'), 'must specify one of None, NoneOnDryRun'));
  else if (se !== 'None' && se !== 'NoneOnDryRun')
    errs.push(notSupported(child(path, 'sideEffects'), se, ['None', 'NoneOnDryRun']));
  const versions = strings(w, 'admissionReviewVersions');
  const vp = child(path, 'admissionReviewVersions');
  if (versions.length === 0) {
    errs.push(required(vp, 'must specify one of v1, v1beta1'));
  } else {
    errs.push(...duplicates(versions, vp));
    if (!versions.some((v) => REVIEW_VERSIONS.includes(v)))
      errs.push(invalid(vp, versions, 'must include at least one of v1, v1beta1'));
  }
  const timeout = num(w, 'timeoutSeconds');
  if (timeout !== undefined && (timeout < 1 || timeout > 30)) {
    errs.push(
      invalid(child(path, 'timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'),
    );
  }
  errs.push(...validateLabelSelector(w['namespaceSelector'], child(path, 'namespaceSelector')));
  errs.push(...validateLabelSelector(w['objectSelector'], child(path, 'objectSelector')));
  if (mutating) {
    const rp = w['reinvocationPolicy'];
    if (rp !== undefined && rp !== null && rp !== 'Never' && rp !== 'IfNeeded') {
      errs.push(notSupported(child(path, 'reinvocationPolicy'), rp, ['IfNeeded', 'Never']));
    }
  }
  validateClientConfig(obj(w, 'clientConfig') ?? {}, child(path, 'clientConfig'), errs);
}

/** A webhook configuration; names are unique within it. */
export function validateWebhookConfiguration(cfg: JsonObject, mutating: boolean, errs: FieldError[]): void {
  const hooks = objects(cfg, 'webhooks');
  hooks.forEach((w, i) => validateWebhook(w, mutating, index('webhooks', i), errs));
  const names = hooks.map((w) => str(w, 'name'));
  names.forEach((n, i) => {
    if (n !== '' && names.indexOf(n) !== i) errs.push(duplicate(child(index('webhooks', i), 'name'), n));
  });
}
