/**
 * Encoded answers of the cluster zone, kept per question so that a repeated question costs a
 * copy of its answer and a new ID instead of a decode, a zone lookup and an encode.
 *
 * Only a plain query takes this path ({@link readPlainQuery}): a standard query with one
 * question whose name has no compression pointer, no answer or authority records, and at most
 * one additional record, an EDNS OPT record at the root ending the message. Its key is the
 * question's bytes as sent (so the answer echoes the client's spelling of the name, as the
 * zone's own answers do) and the RD flag (echoed in the answer); nothing else of the query
 * changes the zone's answer. Everything else goes through dns-packet as before.
 *
 * Answers hold for one version of the zone (`ClusterZone.version`): any change of a Service or
 * an EndpointSlice empties the cache. At most `maxEntries` answers are kept; a full cache is
 * emptied, so names that do not exist cannot grow it without bound.
 */
import type { ClusterZone } from './zone.js';

/** The parts of a plain query the cache needs. */
export interface PlainQuery {
  /** The RD flag and the question's bytes. */
  readonly key: string;
  /** The largest UDP answer the client takes: its EDNS payload size (at least 512), else 512. */
  readonly udpLimit: number;
}

const HEADER = 12;
const OPT = 41;

/** The key and UDP limit of a plain query (see the module comment), or undefined for any other message. */
export function readPlainQuery(msg: Buffer): PlainQuery | undefined {
  if (msg.length < HEADER + 5) return undefined;
  const flags = msg.readUInt16BE(2);
  // QR clear (a query) and opcode 0 (QUERY).
  if ((flags & 0xf800) !== 0) return undefined;
  if (msg.readUInt16BE(4) !== 1 || msg.readUInt16BE(6) !== 0 || msg.readUInt16BE(8) !== 0) return undefined;
  const additionals = msg.readUInt16BE(10);
  if (additionals > 1) return undefined;
  let at = HEADER;
  for (;;) {
    const len = msg[at];
    if (len === undefined || len > 63) return undefined; // past the end, or a pointer
    at += 1 + len;
    if (len === 0) break;
  }
  const questionEnd = at + 4;
  if (questionEnd > msg.length) return undefined;
  let udpLimit = 512;
  if (additionals === 1) {
    // OPT: root name, type, class (the payload size), TTL, RDLENGTH, RDATA, ending the message.
    if (msg.length < questionEnd + 11 || msg[questionEnd] !== 0) return undefined;
    if (msg.readUInt16BE(questionEnd + 1) !== OPT) return undefined;
    if (questionEnd + 11 + msg.readUInt16BE(questionEnd + 9) !== msg.length) return undefined;
    udpLimit = Math.max(512, msg.readUInt16BE(questionEnd + 3));
  } else if (questionEnd !== msg.length) return undefined;
  const rd = (flags & 0x0100) !== 0 ? '1' : '0';
  return { key: rd + msg.toString('latin1', HEADER, questionEnd), udpLimit };
}

/** Answers of one zone by question (see the module comment). */
export class AnswerCache {
  readonly #zone: ClusterZone;
  readonly #max: number;
  readonly #answers = new Map<string, Buffer>();
  #version: number;

  constructor(zone: ClusterZone, maxEntries = 10_000) {
    this.#zone = zone;
    this.#max = maxEntries;
    this.#version = zone.version;
  }

  /** The answer to `query` with the ID `id`, in a buffer of its own; undefined when not cached. */
  get(query: PlainQuery, id: number): Buffer | undefined {
    this.#expire();
    const stored = this.#answers.get(query.key);
    if (stored === undefined) return undefined;
    const out = Buffer.allocUnsafe(stored.length);
    stored.copy(out);
    out.writeUInt16BE(id, 0);
    return out;
  }

  /** Keeps `answer`, computed from the zone as it is now, for `query`'s question. */
  set(query: PlainQuery, answer: Buffer): void {
    this.#expire();
    if (this.#answers.size >= this.#max) this.#answers.clear();
    this.#answers.set(query.key, Buffer.from(answer));
  }

  get size(): number {
    return this.#answers.size;
  }

  #expire(): void {
    if (this.#zone.version === this.#version) return;
    this.#answers.clear();
    this.#version = this.#zone.version;
  }
}
