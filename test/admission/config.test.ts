/**
 * `--admission-control-config-file`: an AdmissionConfiguration's inline and `path`
 * configurations (paths relative to the file, YAML or JSON), and the start-up errors for files
 * that are missing, of the wrong kind, or carry an invalid PodSecurityConfiguration.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePodSecurityConfig } from '../../src/admission/pod-security/policy.js';
import { unimplementedPlugins } from '../../src/admission/plugins.js';
import { buildAdmission, loadAdmissionConfig } from '../../src/server/admission.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-admission-config-'));
  await mkdir(join(dir, 'sub'));
  await writeFile(
    join(dir, 'sub', 'psa.json'),
    JSON.stringify({
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'enforce-version': 'v1.30' },
      exemptions: { usernames: ['ci'] },
    }),
  );
  await writeFile(
    join(dir, 'admission.yaml'),
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  path: sub/psa.json',
      '- name: ResourceQuota',
      '  configuration:',
      '    apiVersion: apiserver.config.k8s.io/v1',
      '    kind: ResourceQuotaConfiguration',
    ].join('\n'),
  );
});

afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('the admission configuration file', () => {
  it('reads inline configurations and paths relative to the file', () => {
    const configs = loadAdmissionConfig(join(dir, 'admission.yaml'));
    expect(configs.get('ResourceQuota')?.['kind']).toBe('ResourceQuotaConfiguration');
    const psa = parsePodSecurityConfig(configs.get('PodSecurity'));
    expect(psa.defaults.enforce).toEqual({ level: 'baseline', minor: 30 });
    expect(psa.defaults.warn).toEqual({ level: 'privileged', minor: undefined });
    expect(psa.exemptions.usernames).toEqual(['ci']);
  });

  it('stops the server on a missing file, a wrong kind or a bad PodSecurity level', async () => {
    expect(() => loadAdmissionConfig(join(dir, 'none.yaml'))).toThrow(
      /failed to read admission control configuration file/,
    );
    await writeFile(join(dir, 'wrong.yaml'), 'apiVersion: v1\nkind: ConfigMap\n');
    expect(() => loadAdmissionConfig(join(dir, 'wrong.yaml'))).toThrow(/must be an AdmissionConfiguration/);
    await writeFile(
      join(dir, 'bad-psa.yaml'),
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: PodSecurity',
        '  configuration:',
        '    apiVersion: pod-security.admission.config.k8s.io/v1',
        '    kind: PodSecurityConfiguration',
        '    defaults: {enforce: strictest}',
      ].join('\n'),
    );
    expect(() =>
      buildAdmission({
        enable: [],
        disable: [],
        configFile: join(dir, 'bad-psa.yaml'),
        external: new Map(),
        authorize: undefined,
        tolerationSeconds: { notReady: 300, unreachable: 300 },
        logError: () => undefined,
      }),
    ).toThrow('PodSecurity: defaults.enforce: must be one of privileged, baseline, restricted');
  });

  it('calls only plugins without an implementation "accepted but not implemented"', () => {
    const named = [
      'NamespaceLifecycle',
      'ServiceAccount',
      'MutatingAdmissionWebhook',
      'ValidatingAdmissionWebhook',
      'ValidatingAdmissionPolicy',
      'NodeRestriction',
      'MutatingAdmissionPolicy',
      'EventRateLimit',
    ];
    expect(unimplementedPlugins(named)).toEqual(['MutatingAdmissionPolicy', 'EventRateLimit']);
  });
});
