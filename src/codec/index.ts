/**
 * The protobuf representation of the built-in kinds (issue 5): object codec, envelope and
 * watch framing. See `protobuf.ts` for the codec, `envelope.ts` for the framing.
 */
export { ProtobufCodec } from './protobuf.js';
export type { DecodedObject, ProtobufCodecOptions } from './protobuf.js';
export {
  decodeEnvelope,
  decodeWatchEvent,
  encodeEnvelope,
  encodeWatchFrame,
  ENVELOPE_TAIL,
  envelopeHead,
  hasProtobufMagic,
  PROTOBUF_MAGIC,
  PROTOBUF_MEDIA_TYPE,
  PROTOBUF_WATCH_MEDIA_TYPE,
  WatchFrameSplitter,
} from './envelope.js';
export type { Envelope, WatchFrame } from './envelope.js';
export { CodecError, isCodecError } from './errors.js';
export type { CodecErrorCode } from './errors.js';
export { goFieldFacts } from './go-facts.js';
export type { GoFieldFacts } from './go-facts.js';
