/**
 * Writes the protobufjs JSON descriptors the node agent loads instead of parsing .proto files
 * (src/agent/cri/schema.ts): `proto/cri/api.json` from `proto/cri/api.proto` and
 * `proto/containerd/events.json` from `proto/containerd/events.proto`. Loading a descriptor is
 * about 30 ms instead of 400 on a loaded machine, and keeps protobufjs's parser out of the agent.
 * Generated, do not edit: test/agent/cri-descriptor.test.ts fails when one drifts from its .proto.
 *
 *   node dist/tools/gen-cri-descriptor.js
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type protobuf from 'protobufjs';
import { CONTAINERD_EVENTS_PROTO, CRI_PROTO, descriptorPath } from '../src/agent/cri/schema.js';

/** The .proto files (relative to the package root) that have a descriptor. */
export const DESCRIBED_PROTOS: readonly string[] = [CRI_PROTO, CONTAINERD_EVENTS_PROTO];

/** The descriptor's text for the .proto at `protoPath`. */
export function criDescriptor(protoPath: string): string {
  const { Root } = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
  return `${JSON.stringify(new Root().loadSync(protoPath).toJSON())}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  for (const proto of DESCRIBED_PROTOS)
    writeFileSync(join(root, descriptorPath(proto)), criDescriptor(join(root, proto)));
}
