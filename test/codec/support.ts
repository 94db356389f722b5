/**
 * Shared pieces of the codec tests: the codec over the generated schemas, the served kinds,
 * fixture paths, and protoc.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ProtobufCodec } from '../../src/codec/index.js';
import { KINDS } from '../../src/registry/kinds.js';
import { findPackageRoot, loadSchemas } from '../../src/registry/schema.js';

/** The repository root. */
export const ROOT = findPackageRoot(import.meta.dirname);

/** Where the golden files live. */
export const FIXTURES = join(ROOT, 'fixtures', 'protobuf');

/** True when golden files should be rewritten instead of compared. */
export const UPDATE = process.env['CAPSTAN_UPDATE_GENERATED'] === '1';

/** One served kind, with its fixture base name (`apps.v1.Deployment`). */
export interface ServedKind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly messageType: string;
  readonly fixture: string;
}

/** Every kind of `proto/kinds.yaml`, virtual ones included (their bodies can be protobuf too). */
export const SERVED_KINDS: readonly ServedKind[] = KINDS.kinds.map((k) => ({
  apiVersion: k.group === '' ? k.version : `${k.group}/${k.version}`,
  kind: k.kind,
  messageType: k.messageType,
  fixture: `${k.group === '' ? 'core' : k.group}.${k.version}.${k.kind}`,
}));

let shared: ProtobufCodec | undefined;

/** One codec for the test file (plans are compiled once). */
export function testCodec(): ProtobufCodec {
  shared ??= new ProtobufCodec(loadSchemas());
  return shared;
}

let packageFiles: Map<string, string> | undefined;

/** The .proto file (relative to `proto/`) declaring `package`. */
export function protoFileOf(messageType: string): string {
  if (packageFiles === undefined) {
    packageFiles = new Map();
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.proto')) {
          const pkg = /^package ([\w.]+);/m.exec(readFileSync(path, 'utf8'))?.[1];
          if (pkg !== undefined) packageFiles?.set(pkg, path.slice(join(ROOT, 'proto').length + 1));
        }
      }
    };
    walk(join(ROOT, 'proto'));
  }
  const pkg = messageType.slice(0, messageType.lastIndexOf('.'));
  const file = packageFiles.get(pkg);
  if (file === undefined) throw new Error(`no .proto file declares package ${pkg}`);
  return file;
}

/** `protoc --decode=<type>` of `bytes`: protobuf text format, an independent decoder. */
export function protocDecode(messageType: string, bytes: Uint8Array): string {
  return execFileSync('protoc', [`--decode=${messageType}`, '-I', 'proto', protoFileOf(messageType)], {
    cwd: ROOT,
    input: bytes,
    maxBuffer: 64 * 1024 * 1024,
  }).toString('utf8');
}

/** `protoc --encode=<type>` of text format: the canonical bytes of that content. */
export function protocEncode(messageType: string, text: string): Buffer {
  return execFileSync('protoc', [`--encode=${messageType}`, '-I', 'proto', protoFileOf(messageType)], {
    cwd: ROOT,
    input: text,
    maxBuffer: 64 * 1024 * 1024,
  });
}
