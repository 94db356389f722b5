/**
 * The generated bootstrap policy module (what a server loads) is the parsed
 * `src/authz/bootstrap-policy.yaml` (the data as written), and the objects expanded from it are
 * the ones the YAML gives.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bootstrapPolicy } from '../../src/authz/bootstrap-policy.js';
import { BOOTSTRAP_POLICY_DATA } from '../../src/authz/bootstrap-policy-data.js';
import { parsePolicyYaml, renderPolicyModule } from '../../src/authz/bootstrap-policy-source.js';

const YAML_PATH = new URL('../../src/authz/bootstrap-policy.yaml', import.meta.url);
const MODULE_PATH = new URL('../../src/authz/bootstrap-policy-data.ts', import.meta.url);

describe('bootstrap policy data', () => {
  const parsed = parsePolicyYaml(readFileSync(YAML_PATH, 'utf8'));

  it('generated src/authz/bootstrap-policy-data.ts matches src/authz/bootstrap-policy.yaml', () => {
    if (process.env['CAPSTAN_UPDATE_GENERATED'] === '1')
      writeFileSync(MODULE_PATH, renderPolicyModule(parsed));
    // Compared as data: reformatting the generated file is not drift.
    expect(BOOTSTRAP_POLICY_DATA).toEqual(parsed);
    expect(parsed.clusterRoles.length).toBeGreaterThan(50);
  });

  it('the objects a server creates are those of the YAML', () => {
    expect(bootstrapPolicy()).toEqual(bootstrapPolicy(parsed));
    const names = bootstrapPolicy().map((p) => `${p.resource}/${p.namespace}/${p.name}`);
    expect(names).toContain('clusterroles//cluster-admin');
    expect(names).toContain('clusterrolebindings//system:controller:namespace-controller');
    expect(new Set(names).size).toBe(names.length);
  });
});
