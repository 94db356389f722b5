/**
 * Protobuf request bodies (`Content-Type: application/vnd.kubernetes.protobuf`, POST and PUT,
 * and DeleteOptions of DELETE). The body parser checks the envelope when the body arrives (no
 * magic, a mangled envelope: 400) and keeps it as a {@link ProtobufBody}; the route decodes the
 * message once it knows which type the endpoint takes.
 */
import type { Envelope, ProtobufCodec } from '../codec/index.js';
import { decodeEnvelope, isCodecError } from '../codec/index.js';
import { badRequest } from '../api/errors.js';
import type { JsonObject } from '../api/object.js';

/** A protobuf request body whose envelope has been read. */
export class ProtobufBody {
  readonly envelope: Envelope;

  /**
   * @throws ApiError 400 when `bytes` lack the `k8s\0` magic or the envelope is malformed.
   */
  constructor(bytes: Uint8Array) {
    try {
      this.envelope = decodeEnvelope(bytes);
    } catch (err) {
      if (isCodecError(err)) throw badRequest(`unable to decode protobuf body: ${err.message}`);
      throw err;
    }
    if (this.envelope.contentEncoding !== '') {
      throw badRequest(
        `unsupported protobuf content encoding ${JSON.stringify(this.envelope.contentEncoding)}`,
      );
    }
    const ct = this.envelope.contentType;
    if (ct !== '' && ct !== 'application/vnd.kubernetes.protobuf') {
      throw badRequest(`unsupported content type in the protobuf envelope: ${JSON.stringify(ct)}`);
    }
  }

  /**
   * The body as a JSON object of `messageType`, `kind` and `apiVersion` from the envelope (when
   * set; the caller defaults and checks them as for JSON bodies).
   * @throws ApiError 400 when the message bytes are not a valid `messageType`.
   */
  decode(codec: ProtobufCodec, messageType: string): JsonObject {
    let body: JsonObject;
    try {
      body = codec.decodeMessage(messageType, this.envelope.raw);
    } catch (err) {
      if (isCodecError(err)) throw badRequest(`unable to decode protobuf body: ${err.message}`);
      throw err;
    }
    const out: JsonObject = {};
    if (this.envelope.kind !== '') out['kind'] = this.envelope.kind;
    if (this.envelope.apiVersion !== '') out['apiVersion'] = this.envelope.apiVersion;
    return Object.assign(out, body);
  }
}
