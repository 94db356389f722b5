/**
 * Writes `proto/cri/api.json`, protobufjs's JSON descriptor of `proto/cri/api.proto`, which the
 * CRI client (src/agent/cri/client.ts) loads instead of parsing the .proto (about 30 ms instead of
 * 400 on a loaded machine). Generated, do not edit: test/agent/cri-descriptor.test.ts fails when
 * it drifts from the .proto.
 *
 *   node dist/tools/gen-cri-descriptor.js
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type protobuf from 'protobufjs';

/** The descriptor's text for the .proto at `protoPath`. */
export function criDescriptor(protoPath: string): string {
  const { Root } = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
  return `${JSON.stringify(new Root().loadSync(protoPath).toJSON())}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const proto = join(root, 'proto/cri/api.proto');
  writeFileSync(join(root, 'proto/cri/api.json'), criDescriptor(proto));
}
