import { describe, expect, it } from 'vitest';
import { canonicalQuantity, parseQuantity, validateName } from '../../src/validation/index.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

describe('validateName', () => {
  it("uses a DNS-1123 subdomain for most kinds, with kube's message", () => {
    expect(validateName('', 'ConfigMap', 'my.config-1')).toEqual([]);
    expect(validateName('', 'ConfigMap', 'My_Config')).toEqual([SUBDOMAIN_MSG]);
    expect(validateName('apps', 'Deployment', 'a'.repeat(254))).toEqual([
      'must be no more than 253 characters',
    ]);
  });

  it('uses a DNS-1123 label for Namespace and StatefulSet', () => {
    expect(validateName('', 'Namespace', 'kube.system')).toEqual(['must not contain dots']);
    expect(validateName('', 'Namespace', 'Kube')).toEqual([LABEL_MSG]);
    expect(validateName('apps', 'StatefulSet', 'db.primary')).toEqual(['must not contain dots']);
    expect(validateName('', 'Namespace', 'a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  it('uses a DNS-1035 label for Service (no leading digit)', () => {
    expect(validateName('', 'Service', '1web')).toEqual([DNS1035_MSG]);
    expect(validateName('', 'Service', 'web-1')).toEqual([]);
  });

  it('uses path-segment names for RBAC kinds', () => {
    expect(validateName('rbac.authorization.k8s.io', 'ClusterRole', 'system:controller:foo')).toEqual([]);
    expect(validateName('rbac.authorization.k8s.io', 'Role', 'a/b%c')).toEqual([
      "may not contain '/'",
      "may not contain '%'",
    ]);
    expect(validateName('rbac.authorization.k8s.io', 'RoleBinding', '..')).toEqual(["may not be '..'"]);
  });

  it('accepts any CSR name and limits CronJob names to 52 characters', () => {
    expect(validateName('certificates.k8s.io', 'CertificateSigningRequest', 'Node CSR:1')).toEqual([]);
    expect(validateName('batch', 'CronJob', 'a'.repeat(53))).toEqual(['must be no more than 52 characters']);
  });

  it('allows a trailing dash in a generateName prefix', () => {
    expect(validateName('', 'Pod', 'web-', true)).toEqual([]);
    expect(validateName('', 'Pod', 'web-', false)).toEqual([SUBDOMAIN_MSG]);
  });

  it('uses DNS-1123 subdomains for custom resources', () => {
    expect(validateName('example.com', 'Widget', 'w.1')).toEqual([]);
    expect(validateName('example.com', 'Widget', 'W')).toEqual([SUBDOMAIN_MSG]);
  });
});

describe('quantities', () => {
  it.each([
    ['0.5', '500m'],
    [0.5, '500m'],
    [1, '1'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['100Mi', '100Mi'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['128974848', '128974848'],
    ['129e6', '129e6'],
    ['129M', '129M'],
    ['-1', '-1'],
    ['0', '0'],
    ['0Gi', '0'],
  ])('canonicalise %j as %s', (input, text) => {
    const q = parseQuantity(input);
    expect(q).toBeDefined();
    expect(canonicalQuantity(q!)).toBe(text);
  });

  it.each(['', 'abc', '1.2.3', '5 Gi', '1Qi', 'Gi'])('reject %j', (input) => {
    expect(parseQuantity(input)).toBeUndefined();
  });
});
