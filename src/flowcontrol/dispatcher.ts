/**
 * API Priority and Fairness, the flow-control pipeline step (after authentication, before
 * impersonation and authorization, as kube's filter): each request is classified by the
 * FlowSchemas, answered with the `X-Kubernetes-PF-FlowSchema-UID` and
 * `X-Kubernetes-PF-PriorityLevel-UID` headers, and then
 * - on an Exempt level, runs at once;
 * - on a Limited level, takes a seat of the level's {@link QueueSet}, waits in a queue for one,
 *   or is refused with 429 `Too many requests, please try again later.` and `Retry-After: 1`
 *   (no seat and `Reject`, a full queue, or a wait longer than the queue wait limit).
 * A seat is held until the raw response closes, so aborted and hijacked requests free theirs.
 *
 * Long-running requests (watches, and the other kinds `isLongRunning` names) are classified and
 * get the headers but take no seat: kube counts a watch only while it sends its initial events;
 * here that window is not seated at all.
 *
 * The configuration comes from {@link FlowControl.configure} (the controller calls it on every
 * change of the stored objects); until then the bootstrap objects are in force.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../api/errors.js';
import { onClose } from '../http/on-close.js';
import type { JsonObject } from '../api/object.js';
import {
  MANDATORY_FLOW_SCHEMAS,
  MANDATORY_PRIORITY_LEVELS,
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
} from '../api/flowcontrol-bootstrap.js';
import { levelOf, matchingOrder, nominalLimits, schemaOf, type Level, type Schema } from './config.js';
import { classify, flowDistinguisher } from './match.js';
import { QueueSet } from './queue-set.js';

// In lower case: header names are case-insensitive, and Node's HTTP/2 layer lower-cases every
// name it is given on each response, which costs nothing for a name already in lower case.
const FLOW_SCHEMA_HEADER = 'x-kubernetes-pf-flowschema-uid';
const PRIORITY_LEVEL_HEADER = 'x-kubernetes-pf-prioritylevel-uid';
const NOTHING = (): void => {};

/** The 429 kube answers when a request is refused for overload. */
export function tooManyRequests(): ApiError {
  return new ApiError('TooManyRequests', 'Too many requests, please try again later.', {
    retryAfterSeconds: 1,
  });
}

/** Why a request was refused (the `reason` label of kube's rejected-requests metric). */
export type RejectReason = 'concurrency-limit' | 'queue-full' | 'time-out' | 'cancelled';

/** What the dispatcher reports (metrics); every method must be cheap and never throw. */
export interface FlowControlObserver {
  dispatched(priorityLevel: string, flowSchema: string): void;
  rejected(priorityLevel: string, flowSchema: string, reason: RejectReason): void;
  /** A request entered (+1) or left (-1) a queue. */
  inQueue(priorityLevel: string, flowSchema: string, delta: number): void;
  /** A request started (+1) or finished (-1) executing. */
  executing(priorityLevel: string, flowSchema: string, delta: number): void;
}

/** A configuration object as the controller hands it over. */
export interface ConfigObject {
  readonly name: string;
  readonly uid: string;
  readonly spec: JsonObject;
}

/** Options of {@link FlowControl}. */
export interface FlowControlOptions {
  /** The server's concurrency limit (`--max-requests-inflight` + `--max-mutating-requests-inflight`). */
  readonly serverConcurrencyLimit: number;
  /** How long a request may wait in a queue. */
  readonly queueWaitMs: number;
  readonly isLongRunning: (request: FastifyRequest) => boolean;
  readonly observer?: FlowControlObserver;
}

interface LevelState {
  readonly level: Level;
  readonly seats: QueueSet | undefined;
}

const bootstrapConfig = (list: readonly { name: string; spec: JsonObject }[]): ConfigObject[] =>
  list.map((o) => ({ name: o.name, uid: '', spec: o.spec }));

/** See the module comment; one per server. */
export class FlowControl {
  readonly #o: FlowControlOptions;
  #schemas: Schema[] = [];
  #catchAll!: Schema;
  #levels = new Map<string, LevelState>();

  constructor(options: FlowControlOptions) {
    this.#o = options;
    this.configure(
      bootstrapConfig([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]),
      bootstrapConfig([...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]),
    );
  }

  /**
   * Puts a configuration in force. Missing mandatory objects are taken from the bootstrap set
   * (as kube does while its ensurer recreates them); schemas whose level does not exist
   * (dangling) are ignored. Levels keep their seats' state across changes; a removed level's
   * executing and queued requests finish on it.
   */
  configure(flowSchemas: readonly ConfigObject[], priorityLevels: readonly ConfigObject[]): void {
    const levels = new Map<string, Level>();
    for (const m of MANDATORY_PRIORITY_LEVELS) levels.set(m.name, levelOf(m.name, '', m.spec));
    for (const p of priorityLevels) levels.set(p.name, levelOf(p.name, p.uid, p.spec));
    const schemas = new Map<string, Schema>();
    for (const m of MANDATORY_FLOW_SCHEMAS) schemas.set(m.name, schemaOf(m.name, '', m.spec));
    for (const f of flowSchemas) schemas.set(f.name, schemaOf(f.name, f.uid, f.spec));
    const limits = nominalLimits(levels.values(), this.#o.serverConcurrencyLimit);
    const next = new Map<string, LevelState>();
    for (const level of levels.values()) {
      const limit = limits.get(level.name) ?? 0;
      const shape = level.limitResponse.type === 'Queue' ? level.limitResponse : undefined;
      let seats = this.#levels.get(level.name)?.seats;
      if (level.exempt) seats = undefined;
      else if (seats === undefined) seats = new QueueSet(limit, shape);
      else seats.reconfigure(limit, shape);
      next.set(level.name, { level, seats });
    }
    this.#levels = next;
    this.#schemas = matchingOrder([...schemas.values()].filter((s) => levels.has(s.priorityLevel)));
    this.#catchAll = schemas.get('catch-all') as Schema;
  }

  /** The concurrency limit of each limited level now (tests, metrics). */
  limits(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [name, s] of this.#levels) if (s.seats !== undefined) out.set(name, s.seats.limit);
    return out;
  }

  /**
   * The flow-control pipeline step.
   * @throws ApiError TooManyRequests when the request is refused.
   */
  readonly admit = (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const info = request.requestInfo;
    const user = request.user;
    // The catch-all schema matches every user; a user in neither group still lands there.
    const schema = classify(this.#schemas, user, info) ?? this.#catchAll;
    const state = this.#levels.get(schema.priorityLevel) as LevelState;
    // On the raw response: watches write their head themselves, and get the headers too.
    reply.raw.setHeader(FLOW_SCHEMA_HEADER, schema.uid);
    reply.raw.setHeader(PRIORITY_LEVEL_HEADER, state.level.uid);
    if (this.#o.isLongRunning(request)) return;
    const pl = state.level.name;
    const fs = schema.name;
    const observer = this.#o.observer;
    const seats = state.seats;
    if (seats === undefined) {
      observer?.dispatched(pl, fs);
      this.#executing(reply, pl, fs, NOTHING);
      return;
    }
    const admission = seats.admit(`${fs}/${flowDistinguisher(schema, user, info)}`, this.#o.queueWaitMs);
    if (admission.kind === 'run') {
      observer?.dispatched(pl, fs);
      this.#executing(reply, pl, fs, admission.release);
      return;
    }
    if (admission.kind === 'rejected') {
      observer?.rejected(pl, fs, admission.reason);
      throw tooManyRequests();
    }
    observer?.inQueue(pl, fs, 1);
    let closed = false;
    const onClose = (): void => {
      closed = true;
      admission.cancel();
    };
    reply.raw.once('close', onClose);
    return admission.dispatched.then((outcome) => {
      observer?.inQueue(pl, fs, -1);
      reply.raw.off('close', onClose);
      if (typeof outcome === 'string') {
        observer?.rejected(pl, fs, outcome);
        throw tooManyRequests();
      }
      observer?.dispatched(pl, fs);
      // The client may have gone between the dispatch and this continuation.
      if (closed) outcome.release();
      else this.#executing(reply, pl, fs, outcome.release);
    });
  };

  #executing(reply: FastifyReply, pl: string, fs: string, release: () => void): void {
    const observer = this.#o.observer;
    observer?.executing(pl, fs, 1);
    const done = (): void => {
      observer?.executing(pl, fs, -1);
      release();
    };
    onClose(reply.raw, done);
  }
}
