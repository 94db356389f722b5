/**
 * The generator on small proto trees: what it keeps, what it rejects (with stable codes),
 * and that its output is deterministic and loadable.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SchemaSet } from '../../src/registry/schema.js';
import { GenSchemaError, generateSchemas, renderSchemas } from '../../tools/gen-schemas.js';

const base = mkdtempSync(join(tmpdir(), 'capstan-gen-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** Writes `files` (path -> text) into a fresh proto dir and returns it. */
function tree(files: Record<string, string>): string {
  const dir = join(base, String(n++));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const HEAD =
  '// Wire facts of the Kubernetes API (message and field names, numbers, types, markers); no upstream prose.\n\nsyntax = "proto2";\n\n';

function failure(files: Record<string, string>): GenSchemaError {
  try {
    generateSchemas(tree(files));
  } catch (err) {
    if (err instanceof GenSchemaError) return err;
    throw err;
  }
  throw new Error('expected a GenSchemaError');
}

describe('generateSchemas', () => {
  const good = {
    'a/types.proto': `${HEAD}package x.a;\n\nimport "b/types.proto";\n\n// +structType=atomic\nmessage Item {\n  // +capstan:omitempty=false\n  optional string key = 1;\n\n  optional int32 port = 2;\n}\n\nmessage Holder {\n  // +optional\n  // +listType=map\n  // +listMapKey=key\n  // +listMapKey=port\n  // +patchMergeKey=key\n  // +patchStrategy=merge\n  repeated Item items = 2;\n\n  // +capstan:inline\n  optional .x.b.Embedded embedded = 1;\n\n  // +capstan:jsonName=$ref\n  optional string ref = 3;\n\n  // +mapType=granular\n  map<string, Item> byName = 4;\n}\n`,
    'b/types.proto': `${HEAD}package x.b;\n\nmessage Embedded {\n  // +k8s:someUpstreamThing\n  optional bool flag = 1;\n}\n`,
  };

  it('keeps numbers, types, labels and markers, with fields in declaration order', () => {
    const { document, warnings } = generateSchemas(tree(good));
    expect(Object.keys(document.messages)).toEqual(['x.a.Holder', 'x.a.Item', 'x.b.Embedded']);
    expect(document['//']).toMatch(/do not edit/);
    const holder = document.messages['x.a.Holder'];
    expect(holder?.fields.map((x) => x.name)).toEqual(['items', 'embedded', 'ref', 'byName']);
    expect(holder?.fields[0]).toEqual({
      name: 'items',
      number: 2,
      type: 'x.a.Item',
      label: 'repeated',
      optional: true,
      listType: 'map',
      listMapKeys: ['key', 'port'],
      patchMergeKey: 'key',
      patchStrategy: 'merge',
    });
    expect(holder?.fields[1]).toEqual({ name: 'embedded', number: 1, type: 'x.b.Embedded', inline: true });
    expect(holder?.fields[2]).toEqual({ name: 'ref', number: 3, type: 'string', jsonName: '$ref' });
    expect(holder?.fields[3]).toEqual({
      name: 'byName',
      number: 4,
      type: 'x.a.Item',
      label: 'map',
      keyType: 'string',
      mapType: 'granular',
    });
    expect(document.messages['x.a.Item']).toEqual({
      structType: 'atomic',
      fields: [
        { name: 'key', number: 1, type: 'string', omitEmpty: false },
        { name: 'port', number: 2, type: 'int32' },
      ],
    });
    expect(warnings).toEqual([
      expect.stringMatching(/b\/types\.proto:9: ignored marker \+k8s:someUpstreamThing/),
    ]);
  });

  it('renders deterministically and loads back with defaults filled in', () => {
    const dir = tree(good);
    const text = renderSchemas(generateSchemas(dir).document);
    expect(renderSchemas(generateSchemas(dir).document)).toBe(text);
    expect(text.startsWith('{"//":')).toBe(true);
    const set = SchemaSet.fromDocument(JSON.parse(text));
    expect(set.field('x.a.Holder', '$ref')).toMatchObject({
      name: 'ref',
      label: 'optional',
      omitEmpty: true,
      inline: false,
    });
    expect(set.jsonField('x.a.Holder', 'flag')?.via.map((v) => v.name)).toEqual(['embedded']);
    expect(set.field('x.a.Item', 'key')?.omitEmpty).toBe(false);
  });

  it('resolves relative type names from the innermost package outwards', () => {
    const { document } = generateSchemas(
      tree({
        'p.proto': `${HEAD}package x.y.z;\n\nmessage A {\n  optional B b = 1;\n  optional y.C c = 2;\n}\n`,
        'q.proto': `${HEAD}package x.y;\n\nmessage B {\n}\n\nmessage C {\n}\n`,
      }),
    );
    expect(document.messages['x.y.z.A']?.fields.map((x) => x.type)).toEqual(['x.y.B', 'x.y.C']);
  });
});

describe('generateSchemas rejects', () => {
  const msg = (body: string): Record<string, string> => ({
    'm.proto': `${HEAD}package t;\n\nmessage Other {\n  optional string name = 1;\n}\n\n${body}`,
  });

  it('a marker separated from its field by a blank line', () => {
    const err = failure(msg('message M {\n  // +optional\n\n  optional string a = 1;\n}\n'));
    expect(err.code).toBe('BAD_MARKER');
    expect(err.message).toMatch(/m\.proto:12:/);
  });

  it('unknown capstan markers and bad marker values', () => {
    expect(failure(msg('message M {\n  // +capstan:inlined\n  optional Other a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
    expect(failure(msg('message M {\n  // +listType=sorted\n  repeated string a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
    expect(failure(msg('message M {\n  // +capstan:omitempty=no\n  optional string a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
  });

  it('inline on a non-message or repeated field', () => {
    expect(failure(msg('message M {\n  // +capstan:inline\n  optional string a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
    expect(failure(msg('message M {\n  // +capstan:inline\n  repeated Other a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
  });

  it('list map keys and merge keys that are not fields of the element', () => {
    expect(
      failure(msg('message M {\n  // +listType=map\n  // +listMapKey=nope\n  repeated Other a = 1;\n}\n'))
        .code,
    ).toBe('BAD_MARKER');
    expect(failure(msg('message M {\n  // +listType=map\n  repeated Other a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
    expect(failure(msg('message M {\n  // +patchMergeKey=nope\n  repeated Other a = 1;\n}\n')).code).toBe(
      'BAD_MARKER',
    );
  });

  it('unknown types, duplicate messages, clashing JSON names and reused numbers', () => {
    expect(failure(msg('message M {\n  optional Missing a = 1;\n}\n')).code).toBe('UNKNOWN_TYPE');
    expect(failure(msg('message Other {\n}\n')).code).toBe('BAD_SCHEMA');
    expect(
      failure(
        msg('message M {\n  optional string name = 1;\n  // +capstan:inline\n  optional Other o = 2;\n}\n'),
      ).code,
    ).toBe('BAD_SCHEMA');
    expect(failure(msg('message M {\n  optional string a = 1;\n  optional string b = 1;\n}\n')).code).toBe(
      'BAD_SCHEMA',
    );
  });

  it('syntax outside the restricted format', () => {
    expect(failure(msg('message M {\n  message N {\n  }\n}\n')).code).toBe('PROTO_SYNTAX');
    expect(failure(msg('enum E {\n  A = 0;\n}\n')).code).toBe('PROTO_SYNTAX');
    expect(failure(msg('message M {\n  optional string a = 1 [deprecated = true];\n}\n')).code).toBe(
      'PROTO_SYNTAX',
    );
    expect(failure({ 'm.proto': '// h\n\nsyntax = "proto3";\n' }).code).toBe('PROTO_SYNTAX');
  });
});
