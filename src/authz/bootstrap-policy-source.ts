/**
 * The source of the bootstrap policy's data: parsing `bootstrap-policy.yaml` and rendering the
 * generated module `bootstrap-policy-data.ts` from it. Only the generator test uses this; a
 * server reads the generated module (parsing the YAML took ~200 ms of a start).
 */
import { parse } from 'yaml';
import type { PolicyFile } from './bootstrap-policy.js';

/** Path of the data file inside the package. */
export const BOOTSTRAP_POLICY_FILE = 'src/authz/bootstrap-policy.yaml';
/** Path of the generated module inside the package. */
export const BOOTSTRAP_POLICY_MODULE = 'src/authz/bootstrap-policy-data.ts';

/** Parses the text of `bootstrap-policy.yaml`. */
export function parsePolicyYaml(text: string): PolicyFile {
  const data = parse(text) as Partial<PolicyFile> | null;
  return {
    clusterRoles: data?.clusterRoles ?? [],
    clusterRoleBindings: data?.clusterRoleBindings ?? [],
    roles: data?.roles ?? [],
    roleBindings: data?.roleBindings ?? [],
  };
}

/** The text of the generated module for `data`, one entry a line; byte-stable. */
export function renderPolicyModule(data: PolicyFile): string {
  const list = (key: keyof PolicyFile): string[] => [
    `  ${key}: [`,
    ...data[key].map((e) => `    ${JSON.stringify(e)},`),
    '  ],',
  ];
  return [
    '// Generated from src/authz/bootstrap-policy.yaml by renderPolicyModule in src/authz/bootstrap-policy-source.ts. Do not edit.',
    '// Regenerate: CAPSTAN_UPDATE_GENERATED=1 npx vitest run test/authz/bootstrap-policy-data.test.ts',
    "import type { PolicyFile } from './bootstrap-policy.js';",
    '',
    '/** The parsed bootstrap policy. */',
    'export const BOOTSTRAP_POLICY_DATA: PolicyFile = {',
    ...list('clusterRoles'),
    ...list('clusterRoleBindings'),
    ...list('roles'),
    ...list('roleBindings'),
    '};',
    '',
  ].join('\n');
}
