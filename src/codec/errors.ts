/**
 * Failures of the protobuf codec. Branch on `code`, never on the message; each code fixes the
 * HTTP status the HTTP layer should answer with when the failure reaches a client.
 */

/**
 * Stable codes of {@link CodecError}:
 * - `PROTOBUF_MISSING_MAGIC`: bytes announced as protobuf lack the `k8s\0` prefix (400);
 * - `PROTOBUF_MALFORMED`: truncated or invalid wire data (bad varint, length past the end,
 *   wrong wire type for a known field, a value JSON cannot express) (400);
 * - `PROTOBUF_TOO_DEEP`: messages nested deeper than the codec's limit, on decode or encode (400);
 * - `PROTOBUF_INVALID_VALUE`: a JSON value does not fit its field while encoding (a string for
 *   an integer, an unparsable time) (500 when the object came from storage; callers encoding a
 *   client's object may answer 400);
 * - `PROTOBUF_UNKNOWN_TYPE`: no message of that name in the schema set (500: a wiring bug).
 */
export type CodecErrorCode =
  | 'PROTOBUF_MISSING_MAGIC'
  | 'PROTOBUF_MALFORMED'
  | 'PROTOBUF_TOO_DEEP'
  | 'PROTOBUF_INVALID_VALUE'
  | 'PROTOBUF_UNKNOWN_TYPE';

const STATUS: Readonly<Record<CodecErrorCode, number>> = {
  PROTOBUF_MISSING_MAGIC: 400,
  PROTOBUF_MALFORMED: 400,
  PROTOBUF_TOO_DEEP: 400,
  PROTOBUF_INVALID_VALUE: 500,
  PROTOBUF_UNKNOWN_TYPE: 500,
};

/** A codec failure with a stable {@link CodecErrorCode} and the HTTP status it maps to. */
export class CodecError extends Error {
  override readonly name = 'CodecError';
  readonly code: CodecErrorCode;
  /** HTTP status for this code (see {@link CodecErrorCode}). */
  readonly httpStatus: number;
  constructor(code: CodecErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.httpStatus = STATUS[code];
  }
}

/** True for errors thrown by the codec; use instead of `instanceof` across module copies. */
export function isCodecError(err: unknown): err is CodecError {
  return err instanceof CodecError;
}

/** Shorthand for the decode failure every malformed input ends in. */
export function malformed(message: string): CodecError {
  return new CodecError('PROTOBUF_MALFORMED', message);
}

/** Shorthand for a JSON value that does not fit its field. */
export function invalidValue(message: string): CodecError {
  return new CodecError('PROTOBUF_INVALID_VALUE', message);
}
