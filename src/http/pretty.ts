/**
 * Pretty JSON, as kube-apiserver gives it: a JSON answer is indented by two spaces when the
 * request asks with `?pretty=true` (any value Go's ParseBool reads as true), or, without that
 * parameter, when its User-Agent starts with `curl`, `Wget` or `Mozilla/5.0` (kube's
 * isPrettyPrint). kube indents with `json.MarshalIndent(obj, "", "  ")` and no trailing
 * newline; watch streams are never indented.
 *
 * Answers are encoded once, compact, by their handlers; the few requests that ask get a reply
 * whose send re-indents the bytes ({@link indentJson} copies strings as they are, so escapes
 * stay).
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isJsonMedia } from './json-newline.js';
import type { RequestInfo } from './request-info.js';

/** Go's strconv.ParseBool spellings of true and false. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/** kube's isPrettyPrint: the `pretty` parameter when given, else the user agent. */
export function wantsPretty(rawQuery: string, userAgent: string | undefined): boolean {
  if (rawQuery.includes('pretty')) {
    const value = new URLSearchParams(rawQuery).get('pretty');
    if (value !== null && value !== '') return TRUE.has(value);
  }
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Go's json.Indent of a JSON document with no prefix and two spaces: a newline and the depth's
 * indent after `{`, `[` and `,` and before a closing bracket, `": "` after keys, empty objects
 * and arrays kept as `{}` and `[]`. Whitespace between tokens is dropped; strings are copied.
 */
export function indentJson(input: Buffer): Buffer {
  const out: number[] = [];
  let depth = 0;
  /** An opening bracket was just written: its newline waits for the next token. */
  let opened = false;
  const newline = (): void => {
    out.push(0x0a);
    for (let i = 0; i < depth; i++) out.push(0x20, 0x20);
  };
  for (let i = 0; i < input.length; i++) {
    const c = input[i] ?? 0;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (opened && c !== CLOSE_OBJECT && c !== CLOSE_ARRAY) {
      opened = false;
      newline();
    }
    switch (c) {
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        out.push(c);
        depth++;
        opened = true;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        depth--;
        if (opened) opened = false;
        else newline();
        out.push(c);
        break;
      case COMMA:
        out.push(c);
        newline();
        break;
      case COLON:
        out.push(c, 0x20);
        break;
      case QUOTE: {
        out.push(c);
        for (i++; i < input.length; i++) {
          const s = input[i] ?? 0;
          out.push(s);
          if (s === BACKSLASH) {
            i++;
            out.push(input[i] ?? 0);
          } else if (s === QUOTE) break;
        }
        break;
      }
      default:
        out.push(c);
    }
  }
  return Buffer.from(out);
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

function isPlainJson(contentType: unknown): boolean {
  return typeof contentType === 'string' && isJsonMedia(contentType);
}

function rawQueryOf(request: FastifyRequest): string {
  const q = request.url.indexOf('?');
  return q === -1 ? '' : request.url.slice(q + 1);
}

/** Subresources whose answers are not API objects (streams and proxied bytes). */
const RAW_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

/**
 * True for answers kube writes through its object negotiation: the resource API and discovery
 * (`/api`, `/apis`), not proxied answers, logs, OpenAPI or the health endpoints.
 */
function negotiated(info: RequestInfo): boolean {
  if (!info.isResourceRequest) return /^\/apis?(\/|$)/.test(info.path);
  return info.verb !== 'proxy' && !RAW_SUBRESOURCES.has(info.subresource);
}

/**
 * Makes `reply` indent its JSON answer when the request asks for pretty output (see the module
 * comment). Called once per request from the request pipeline's hook, after the request info is
 * parsed: a request that does not ask costs two string checks, and no reply hook runs for it
 * (fastify's hook runner costs a turn per hook on every request).
 */
export function prettyWhenAsked(request: FastifyRequest, reply: FastifyReply, info: RequestInfo): void {
  if (!wantsPretty(rawQueryOf(request), request.headers['user-agent']) || !negotiated(info)) return;
  const send = reply.send.bind(reply);
  reply.send = (payload?: unknown): FastifyReply => {
    if (!isPlainJson(reply.getHeader('content-type'))) return send(payload);
    const indent = (compact: Buffer): FastifyReply => {
      reply.removeHeader('content-length');
      return send(indentJson(compact));
    };
    if (typeof payload === 'string') return indent(Buffer.from(payload));
    // Tables and other rendered forms come as plain Uint8Arrays.
    if (payload instanceof Uint8Array)
      return indent(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
    if (payload instanceof Readable) {
      collect(payload).then(indent, (err: unknown) => send(err));
      return reply;
    }
    return send(payload);
  };
}
