/**
 * kube-apiserver writes compact JSON with Go's json.Encoder, which ends every document with a
 * newline: objects, lists, Tables, Status errors and discovery documents alike (`kubectl get
 * --raw` prints it, and a client comparing bodies sees it). Indented output (`?pretty`, a curl
 * user agent) has none: indenting drops it (pretty.ts), as Go's json.MarshalIndent does.
 */
import { Readable } from 'node:stream';

const NEWLINE = Buffer.from('\n');

/** True for a plain JSON media type (not a watch stream, whose events carry their own newlines). */
export function isJsonMedia(contentType: string): boolean {
  const media = contentType.split(';', 1)[0]?.trim().toLowerCase();
  return media === 'application/json' && !contentType.includes('stream=watch');
}

/** A body as the routes send it. */
type Body = Uint8Array | string | Readable;

/** `body` ending with a newline (added when missing; a streamed body already ends with one). */
export function endLine(body: string): string;
export function endLine(body: Body): Body;
export function endLine(body: Body): Body {
  if (typeof body === 'string') return body.endsWith('\n') ? body : `${body}\n`;
  if (body instanceof Readable) return body;
  if (body[body.byteLength - 1] === NEWLINE[0]) return body;
  return Buffer.concat([body, NEWLINE]);
}

/** `body` as sent in `contentType`: ended with a newline when that is plain JSON, else as it is. */
export function framed(contentType: string, body: Body): Body {
  return isJsonMedia(contentType) ? endLine(body) : body;
}
