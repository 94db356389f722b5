/**
 * Descriptions of the built-in kinds (proto/descriptions/*.yaml): the files cover every message
 * and field the served documents hold and name nothing else; the line reader reads them as YAML
 * does and leaves anything else to the YAML parser; the loader refuses malformed and duplicate
 * entries; the definitions place the texts where kube-apiserver does (v2 beside `$ref`,
 * v3 in an `allOf` wrapper); and stock kubectl 1.27 and 1.33 `explain` shows them, from the v3
 * documents and (1.27, `plaintext-openapiv2`) from the v2 protobuf one. The expected texts are read
 * from the YAML files here with a plain YAML parser, not through the loader under test.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefinitionBuilder } from '../../src/openapi/definitions.js';
import { readSimpleDescriptionYaml } from '../../src/openapi/description-yaml.js';
import {
  defaultDescriptionsDir,
  Descriptions,
  DescriptionsError,
  loadDescriptions,
  parseDescriptionFile,
} from '../../src/openapi/descriptions.js';
import { definitionName } from '../../src/openapi/names.js';
import type { JsonObject } from '../../src/openapi/types.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas, specialWireType } from '../../src/registry/schema.js';
import {
  adminJson,
  adminTls,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';

const schemas = loadSchemas();
const DIR = defaultDescriptionsDir();
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** `<package>.<Message>` → its entry, read straight from the YAML files (not through the loader). */
async function readYamlEntries(): Promise<
  Map<string, { description?: string; fields?: Record<string, string> }>
> {
  const out = new Map<string, { description?: string; fields?: Record<string, string> }>();
  for (const name of (await readdir(DIR)).filter((n) => n.endsWith('.yaml'))) {
    const doc = parse(await readFile(join(DIR, name), 'utf8')) as {
      package: string;
      messages: Record<string, { description?: string; fields?: Record<string, string> }>;
    };
    for (const [message, entry] of Object.entries(doc.messages)) out.set(`${doc.package}.${message}`, entry);
  }
  return out;
}

/** The YAML text of a message (`field` undefined) or of one of its fields; fails the test when absent. */
function yamlText(
  entries: Awaited<ReturnType<typeof readYamlEntries>>,
  message: string,
  field?: string,
): string {
  const entry = entries.get(message);
  const text = field === undefined ? entry?.description : entry?.fields?.[field];
  expect(
    text,
    `no description of ${message}${field === undefined ? '' : `.${field}`} in ${DIR} ` +
      '(the description files of the built-in packages come from the writers\u2019 branches)',
  ).toBeTypeOf('string');
  return (text as string).trim();
}

/** Whitespace collapsed: kubectl wraps descriptions at its terminal width. */
function flat(s: string): string {
  return s.replace(/\s+/g, ' ');
}

describe('the description files', () => {
  it('name only real messages and their non-inline fields (no stale or misspelled keys)', () => {
    const stale: string[] = [];
    for (const [message, entry] of loadDescriptions().messages()) {
      const m = schemas.message(message);
      if (m === undefined) {
        stale.push(`${entry.file}: ${message} (no such message)`);
        continue;
      }
      const names = new Set(m.fields.filter((f) => !f.inline).map((f) => f.jsonName));
      for (const json of entry.fields.keys())
        if (!names.has(json)) stale.push(`${entry.file}: ${message}.${json} (no such non-inline field)`);
    }
    expect(stale, `entries naming nothing:\n${stale.join('\n')}`).toEqual([]);
  });

  it('keep ObjectMeta in its own file, with the creationTimestamp words the CRD conformance test reads', async () => {
    const file = 'k8s.io.apimachinery.pkg.apis.meta.v1.objectmeta.yaml';
    const only = parseDescriptionFile(await readFile(join(DIR, file), 'utf8'), file);
    expect([...only.keys()]).toEqual([`${META}.ObjectMeta`]);
    expect(only.get(`${META}.ObjectMeta`)?.fields.get('creationTimestamp')).toMatch(
      /^CreationTimestamp is a timestamp/,
    );
  });
});

describe('the line reader of the description files', () => {
  it('reads every description file, as YAML does', async () => {
    const names = (await readdir(DIR)).filter((n) => n.endsWith('.yaml'));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const source = await readFile(join(DIR, name), 'utf8');
      expect(readSimpleDescriptionYaml(source), name).toEqual(parse(source));
    }
  });

  const simple = [
    "package: a.b\nmessages:\n  A:\n    description: Plain text, with \"quotes\" and it's fine.\n    fields:\n      $ref: \"x: y\"\n      x-b: 'it''s'\n",
    '# c\npackage: a\n\nmessages:\n  # c\n  A:\n    description: "\\u00e9\\n\\"q\\""\n    fields: {}\n  B:\n    fields:\n',
    'messages:\n',
    'package: a\nmessages:\n  A:\n',
  ];
  it.each(simple)('reads %j as YAML does', (source) => {
    expect(readSimpleDescriptionYaml(source)).toEqual(parse(source));
  });

  const other = [
    'package: a\nmessages:\n  A:\n    description: >\n      folded\n',
    'package: a\nmessages: {A: {}}\n',
    'package: a\nmessages:\n  A:\n    description: true\n',
    'package: a\nmessages:\n  A:\n    description: 12 seconds\n',
    'package: a\nmessages:\n  A:\n    description: null\n',
    'package: a\nmessages:\n  A:\n    description: text # comment\n',
    'package: a\nmessages:\n  A:\n    description: a: b\n',
    'package: a\nmessages:\n  A:\n    description: one\n      two\n',
    'package: a\nmessages:\n  A:\n    description: "\\x41"\n',
    'package: a\nmessages:\n  A: {}\n  A: {}\n',
    'package: a\nmessages:\n   A: {}\n',
    'package: a\n---\nmessages: {}\n',
    'package: a\nmessages:\n  __proto__:\n    description: x\n',
    'package:\ta\n',
    'package: a\nmessages:\n  A:\n    fields:\n      f:\n        g: h\n',
  ];
  it.each(other)('leaves %j to the YAML parser', (source) => {
    expect(readSimpleDescriptionYaml(source)).toBeUndefined();
  });
});

describe('the loader', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-descriptions-'));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const ok = 'package: x.y\nmessages:\n  A:\n    description: An A.\n    fields:\n      b: The b.\n';

  async function loadFiles(files: Record<string, string>): Promise<Descriptions> {
    const sub = await mkdtemp(join(dir, 'case-'));
    for (const [name, text] of Object.entries(files)) await writeFile(join(sub, name), text);
    return loadDescriptions(sub);
  }

  async function refusal(files: Record<string, string>): Promise<DescriptionsError> {
    const err: unknown = await loadFiles(files).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DescriptionsError);
    return err as DescriptionsError;
  }

  it('merges files by full message name and answers by JSON name', async () => {
    const d = await loadFiles({
      'a.yaml': ok,
      'b.yaml': 'package: x.z\nmessages:\n  A:\n    description: "Another: A."\n    fields: {}\n',
      'notes.txt': 'ignored',
    });
    expect(d.messageDescription('x.y.A')).toBe('An A.');
    expect(d.fieldDescription('x.y.A', 'b')).toBe('The b.');
    expect(d.messageDescription('x.z.A')).toBe('Another: A.');
    expect(d.fieldDescription('x.z.A', 'b')).toBeUndefined();
    expect(d.messageDescription('x.y.B')).toBeUndefined();
  });

  it('refuses a message described twice, naming both files', async () => {
    const err = await refusal({ 'a.yaml': ok, 'b.yaml': ok });
    expect(err.code).toBe('DESCRIPTIONS_DUPLICATE');
    expect(err.message).toBe('b.yaml: message x.y.A is already described in a.yaml');
    const same = await refusal({ 'a.yaml': `${ok}  A:\n    description: Again.\n    fields: {}\n` });
    expect(same.code).toBe('DESCRIPTIONS_INVALID');
    expect(same.message).toMatch(/^a\.yaml: not valid YAML: .*unique/s);
  });

  it.each([
    ['a YAML syntax error', 'package: x\nmessages: [\n', /^bad\.yaml: not valid YAML/],
    ['no package', 'messages: {}\n', /^bad\.yaml: package must be a non-empty string$/],
    ['an unknown top-level key', `${ok}extra: 1\n`, /^bad\.yaml: the file has unknown key "extra"/],
    [
      'a message without fields',
      'package: x\nmessages:\n  A:\n    description: An A.\n',
      /message A fields must be a mapping/,
    ],
    [
      'an empty description',
      'package: x\nmessages:\n  A:\n    description: ""\n    fields: {}\n',
      /^bad\.yaml: message A description must be a non-empty string$/,
    ],
    [
      'a field text that is not a string',
      'package: x\nmessages:\n  A:\n    description: An A.\n    fields:\n      n: 1\n',
      /^bad\.yaml: message A field n must be a non-empty string$/,
    ],
    [
      'a misspelled key',
      'package: x\nmessages:\n  A:\n    descripton: An A.\n    fields: {}\n',
      /^bad\.yaml: message A has unknown key "descripton"/,
    ],
  ])('refuses %s, naming the file and entry', async (_, text, message) => {
    const err = await refusal({ 'bad.yaml': text });
    expect(err.code).toBe('DESCRIPTIONS_INVALID');
    expect(err.message).toMatch(message);
  });
});

describe('the definitions', () => {
  const descriptions = new Descriptions(
    parseDescriptionFile(
      [
        'package: k8s.io.api.apps.v1',
        'messages:',
        '  DeploymentSpec:',
        '    description: Spec text.',
        '    fields:',
        '      strategy: Strategy text.',
        '      replicas: Replicas text.',
        '  DeploymentStrategy:',
        '    description: Strategy type text.',
        '    fields: {}',
      ].join('\n'),
      'apps.yaml',
    ),
  );
  const more = [
    parseDescriptionFile(
      'package: k8s.io.api.core.v1\nmessages:\n  ProbeHandler:\n    description: H.\n    fields:\n      httpGet: Inline text.\n',
      'core.yaml',
    ),
    parseDescriptionFile(
      `package: ${META}\nmessages:\n  TypeMeta:\n    description: T.\n    fields:\n      apiVersion: Version text.\n  Time:\n    description: Time text.\n    fields: {}\n`,
      'meta.yaml',
    ),
  ];
  const all = new Descriptions(new Map([...descriptions.messages(), ...more.flatMap((m) => [...m])]));
  const defs = new DefinitionBuilder(schemas, loadRegistry(), all);
  const props = (def: JsonObject): Record<string, JsonObject> =>
    def['properties'] as Record<string, JsonObject>;

  it('describe the message on its definition and a $ref field beside $ref (v2) or around it in allOf (v3)', () => {
    const spec = 'k8s.io.api.apps.v1.DeploymentSpec';
    const strategy = definitionName('k8s.io.api.apps.v1.DeploymentStrategy');
    const v2 = defs.definition(spec, 'v2');
    const v3 = defs.definition(spec, 'v3');
    expect(v2['description']).toBe('Spec text.');
    expect(v3['description']).toBe('Spec text.');
    expect(props(v2)['strategy']).toEqual({
      $ref: `#/definitions/${strategy}`,
      description: 'Strategy text.',
      'x-kubernetes-patch-strategy': 'retainKeys',
    });
    expect(props(v3)['strategy']).toEqual({
      allOf: [{ $ref: `#/components/schemas/${strategy}` }],
      description: 'Strategy text.',
      'x-kubernetes-patch-strategy': 'retainKeys',
    });
    expect(props(v2)['replicas']).toEqual({
      type: 'integer',
      format: 'int32',
      description: 'Replicas text.',
    });
    expect(props(v2)['selector']?.['description']).toBeUndefined();
  });

  it('describe inlined properties by their own message, TypeMeta fields and special types too', () => {
    expect(props(defs.definition('k8s.io.api.core.v1.Probe', 'v2'))['httpGet']?.['description']).toBe(
      'Inline text.',
    );
    expect(props(defs.definition('k8s.io.api.apps.v1.Deployment', 'v3'))['apiVersion']).toEqual({
      description: 'Version text.',
      type: 'string',
    });
    expect(defs.definition(`${META}.Time`, 'v2')).toEqual({
      description: 'Time text.',
      type: 'string',
      format: 'date-time',
    });
  });
});

describe('served descriptions', () => {
  let server: TestServer;
  let entries: Awaited<ReturnType<typeof readYamlEntries>>;
  let v2: Record<string, JsonObject>;

  beforeAll(async () => {
    server = await startTestServer();
    entries = await readYamlEntries();
    const res = await adminJson(`${server.url}/openapi/v2`, adminTls(server.kubeconfigPath));
    expect(res.status).toBe(200);
    v2 = res.json['definitions'] as Record<string, JsonObject>;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('cover every message and field of the served definitions, and the documents carry them', () => {
    const byDefinition = new Map(schemas.messageNames().map((m) => [definitionName(m), m]));
    const missing: string[] = [];
    const notServed: string[] = [];
    let checked = 0;
    for (const [name, def] of Object.entries(v2)) {
      const message = byDefinition.get(name);
      if (message === undefined) continue;
      const text = entries.get(message)?.description;
      if (text === undefined) missing.push(message);
      else if (def['description'] !== text.trim()) notServed.push(message);
      if (specialWireType(message) !== undefined) continue;
      const properties = (def['properties'] ?? {}) as Record<string, JsonObject>;
      for (const [json, ref] of schemas.jsonView(message)) {
        const owner = ref.via.at(-1)?.type ?? message;
        const field = entries.get(owner)?.fields?.[json];
        checked++;
        if (field === undefined) missing.push(`${owner}.${json}`);
        else if (properties[json]?.['description'] !== field.trim()) notServed.push(`${message}.${json}`);
      }
    }
    expect(checked).toBeGreaterThan(1500);
    // Both lists are reported, the wiring's first.
    expect.soft(notServed, `described but not served as written:\n${notServed.join('\n')}`).toEqual([]);
    const unique = [...new Set(missing)];
    expect(
      unique,
      `${unique.length} served messages/fields without a description:\n${unique.join('\n')}`,
    ).toEqual([]);
  });

  describe.each(['1.27', '1.33'] as const satisfies readonly KubectlVersion[])(
    'kubectl %s explain',
    (version) => {
      const explain = async (...args: string[]): Promise<string> => {
        const r = await runKubectl(version, ['explain', ...args], server.kubeconfigPath);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        return flat(r.stdout);
      };

      it('shows ObjectMeta texts: pods.metadata.creationTimestamp', async () => {
        const out = await explain('pods.metadata.creationTimestamp');
        expect(out).toContain(flat(yamlText(entries, `${META}.ObjectMeta`, 'creationTimestamp')));
        expect(out).toContain('CreationTimestamp is a timestamp');
      });

      it('shows a kind\u2019s own description: deployments', async () => {
        const out = await explain('deployments');
        expect(out).toMatch(/KIND: Deployment/);
        expect(out).toContain(`DESCRIPTION: ${flat(yamlText(entries, 'k8s.io.api.apps.v1.Deployment'))}`);
      });

      it('shows a built-in field: deployments.spec.replicas', async () => {
        const out = await explain('deployments.spec.replicas');
        expect(out).toContain(flat(yamlText(entries, 'k8s.io.api.apps.v1.DeploymentSpec', 'replicas')));
      });

      it('shows pods.spec.containers with its fields\u2019 texts and the required name', async () => {
        const out = await explain('pods.spec.containers');
        expect(out).toContain(flat(yamlText(entries, 'k8s.io.api.core.v1.PodSpec', 'containers')));
        expect(out).toContain(
          `name <string> -required- ${flat(yamlText(entries, 'k8s.io.api.core.v1.Container', 'name'))}`,
        );
      });

      if (version === '1.27')
        it('shows them from the v2 protobuf document (plaintext-openapiv2)', async () => {
          const meta = await explain('pods.metadata.creationTimestamp', '--output=plaintext-openapiv2');
          expect(meta).toContain(flat(yamlText(entries, `${META}.ObjectMeta`, 'creationTimestamp')));
          const kind = await explain('deployments', '--output=plaintext-openapiv2');
          expect(kind).toContain(`DESCRIPTION: ${flat(yamlText(entries, 'k8s.io.api.apps.v1.Deployment'))}`);
          const name = await explain('pods.spec.containers', '--output=plaintext-openapiv2');
          expect(name).toContain(
            `name <string> -required- ${flat(yamlText(entries, 'k8s.io.api.core.v1.Container', 'name'))}`,
          );
        });
    },
  );
});
