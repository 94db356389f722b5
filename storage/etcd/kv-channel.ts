/**
 * The store's hot calls (`KV/Range`, `KV/Txn` and the `Watch/Watch` streams) as plain gRPC on
 * {@link GrpcSession}s, beside the `etcd3` client that still does everything else (leases,
 * compaction, status). Each member has one connection for the unary calls and another for the
 * watch streams, so resetting the first after a timed-out call never cuts the watches.
 *
 * Why: profiled under a create/update/delete load, each call through `etcd3` and `@grpc/grpc-js`
 * cost about 0.5 ms of CPU and added ~1 ms of latency (connection pool, cockatiel policies,
 * interceptor/resolving/retrying/load-balancing call layers, per-call caller-stack capture),
 * i.e. as much CPU as the rest of a request. A unary gRPC call is one HTTP/2 stream: headers, one
 * length-prefixed protobuf message, and the status in the trailers (`grpc-session.ts` says why
 * that is not `node:http2` either). Requests and responses keep the `etcd3` shapes (the same
 * protobuf messages, encoded and decoded by `messages.ts` with the same conventions: 64-bit
 * integers and enums as strings, defaults filled), and failures become the same `etcd3` error
 * classes, so the rest of the backend (`error-map.ts`) is unchanged.
 *
 * Member choice: reads go to the members in random order, a member {@link HostGates} marks down
 * skipped while another is up. Writes go to the leader ({@link LeaderRoute}) when one is known:
 * a write a follower receives is forwarded to the leader, and when the leader dies in between
 * the proposal is lost and the follower answers only after etcd's request timeout (5 s + two
 * election timeouts, 7 s by default: the HA failover comparison saw writes taken in the second
 * after an etcd leader kill wait that long). After the leader's connection fails, writes wait
 * (up to {@link LEADER_WAIT_MS}) until a member says it is the new leader, usually one election
 * timeout, and go there. Failover follows kube's etcd client (clientv3's retry interceptor over
 * grpc-go):
 * - a call that certainly never reached a member (connection refused or not yet made, reset
 *   before its bytes were handed to the connection, refused by GOAWAY or REFUSED_STREAM) is sent
 *   at once to the next member, reads and writes alike (grpc-go's transparent retry, clientv3's
 *   "no connection available" retry of mutable calls);
 * - a `Range` whose fate is unknown and that failed UNAVAILABLE is sent again to the next member
 *   (clientv3 retries repeatable calls on UNAVAILABLE);
 * - a `Txn` whose fate is unknown fails (clientv3 never repeats a mutable call that may have
 *   reached etcd), as does any call past its deadline.
 * Each full round over the members that found none is followed by a 25 ms pause (clientv3's
 * round-robin quorum backoff), up to {@link MAX_ATTEMPTS} attempts or the call's deadline.
 * A watch stream goes to a random member that is not marked down; one that fails marks its
 * member down and is re-opened by its watch (`watch.ts`) from the revision it reached.
 */
import { EventEmitter } from 'node:events';
import { castGrpcError, ClientClosedError, GRPCUnavailableError } from 'etcd3';
import type {
  IRangeRequest,
  IRangeResponse,
  ITxnRequest,
  ITxnResponse,
  IWatchRequest,
  IWatchResponse,
} from 'etcd3';
import type { CallOptions } from './codec.js';
import {
  decodeRangeResponse,
  decodeStatusResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchRequest,
} from './messages.js';
import {
  GRPC_DEADLINE_EXCEEDED,
  GRPC_INTERNAL,
  GrpcFailure,
  GrpcSession,
  type SessionTarget,
  type StreamCall,
} from './grpc-session.js';
import { MemberSkippedError, type HostGates } from './host-gate.js';
import type { WatchStream } from './watch.js';

/**
 * gRPC metadata asking etcd to end a watch stream (UNAVAILABLE, "no leader") once its member has
 * had no leader for a while, as kube's watches do (clientv3.WithRequireLeader). Without it, a
 * member cut off from its peers keeps the stream open and silent, and the watch misses every
 * write the quorum makes meanwhile; with it, the stream fails and is re-opened on another member.
 */
const REQUIRE_LEADER: [string, string][] = [['hasleader', 'true']];

/**
 * How long writes wait for a new leader after the leader's connection failed (etcd elects one
 * within an election timeout or two: 1 s by default, randomised up to twice that); then they go
 * to the members in random order, as without a known leader.
 */
const LEADER_WAIT_MS = 3_000;
/** Pause between two rounds of status calls while looking for the leader. */
const LEADER_POLL_MS = 50;
/** Age after which the known leader is checked again (a leader can change without a failure). */
const LEADER_CHECK_MS = 5_000;
/** Bound on one status call. */
const STATUS_TIMEOUT_MS = 1_000;

/** clientv3's default number of attempts of a unary call. */
const MAX_ATTEMPTS = 100;
/** clientv3's pause between rounds over the members (roundRobinQuorumBackoff's 25 ms). */
const ROUND_PAUSE_MS = 25;

/** gRPC status names by code, for messages in grpc-js's form (`14 UNAVAILABLE: ...`). */
const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** A gRPC failure as the `etcd3` error class of its status (what its own calls throw). */
function grpcError(code: number, details: string): Error {
  const err = new Error(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`);
  return castGrpcError(Object.assign(err, { code }));
}

/** TLS material for the sessions (PEM), as `options.ts` reads it. */
export interface ChannelTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/** One member: where it is and its current session (made on first use, dropped when it fails). */
class Member {
  readonly host: string;
  readonly #target: SessionTarget;
  #session: GrpcSession | undefined;

  constructor(endpoint: string, tls: ChannelTls | undefined) {
    const secure = tls !== undefined || endpoint.startsWith('https://');
    const bare = endpoint.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
    this.host = bare;
    const url = new URL(`${secure ? 'https' : 'http'}://${bare}`);
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    this.#target = { host: url.hostname, port, ...(secure ? { tls: tls ?? {} } : {}) };
  }

  session(): GrpcSession {
    const current = this.#session;
    if (current !== undefined && current.usable) return current;
    const session = new GrpcSession(this.#target);
    this.#session = session;
    return session;
  }

  /** Drops the session (a call on it timed out: the connection may be silently dead). */
  reset(): void {
    const session = this.#session;
    this.#session = undefined;
    session?.destroy('the connection was reset after a call timed out');
  }

  close(): void {
    this.reset();
  }
}

/** `Range` and `Txn` calls and `Watch` streams to one etcd cluster (see the module comment). */
export class KvChannel {
  readonly #members: Member[];
  /** The same members, for watch streams. */
  readonly #watchMembers: Member[];
  readonly #gates: HostGates;
  readonly #leader: LeaderRoute;
  #closed = false;

  constructor(endpoints: readonly string[], tls: ChannelTls | undefined, gates: HostGates) {
    this.#members = endpoints.map((e) => new Member(e, tls));
    this.#watchMembers = endpoints.map((e) => new Member(e, tls));
    this.#gates = gates;
    this.#leader = new LeaderRoute(this.#members, gates, (member) => this.#status(member));
  }

  // async: a request that cannot be encoded rejects, as a failed call does, rather than throwing.
  async range(request: IRangeRequest, options: CallOptions): Promise<IRangeResponse> {
    const message = encodeRangeRequest(request);
    return this.#call('/etcdserverpb.KV/Range', message, decodeRangeResponse, options, true);
  }

  async txn(request: ITxnRequest, options: CallOptions): Promise<ITxnResponse> {
    const message = encodeTxnRequest(request);
    return this.#call('/etcdserverpb.KV/Txn', message, decodeTxnResponse, options, false);
  }

  /**
   * Opens a watch stream on a random member not marked down (any member when all are); a closed
   * channel gives a stream that fails at once.
   */
  watch(): WatchStream {
    const up = this.#watchMembers.filter((m) => !this.#gates.isDown(m.host));
    const pool = up.length > 0 ? up : this.#watchMembers;
    const member = pool[Math.floor(Math.random() * pool.length)] as Member;
    return new GrpcWatchStream(this.#closed ? undefined : member, (err) => {
      if (isUnavailable(err)) this.#gates.markFailed(member.host);
    });
  }

  close(): void {
    this.#closed = true;
    this.#leader.close();
    for (const member of this.#members) member.close();
    for (const member of this.#watchMembers) member.close();
  }

  async #call<Res>(
    path: string,
    message: Uint8Array,
    decode: (body: Buffer) => Res,
    options: CallOptions,
    repeatable: boolean,
  ): Promise<Res> {
    if (this.#closed) throw new ClientClosedError('etcd');
    const deadline = typeof options.deadline === 'number' ? options.deadline : undefined;
    let last: Error | undefined;
    let attempts = 0;
    for (let round = 0; ; round++) {
      if (round > 0) {
        if (deadline !== undefined && Date.now() + ROUND_PAUSE_MS >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, ROUND_PAUSE_MS));
        if (this.#closed) throw new ClientClosedError('etcd');
      }
      let tried = false;
      let leaderLost = false;
      const leader = repeatable ? undefined : await this.#leader.forWrite(deadline);
      if (this.#closed) throw new ClientClosedError('etcd');
      for (const member of this.#order(leader)) {
        if (attempts >= MAX_ATTEMPTS) throw last ?? new MemberSkippedError('none');
        let reached = false;
        try {
          return await this.#gates.policyFor(member.host).execute(async () => {
            reached = true;
            attempts += 1;
            const body = await this.#unary(member, path, message, deadline);
            return decode(body);
          });
        } catch (err) {
          last = err as Error;
          if (member === leader) {
            // Whatever failed (the connection, a dropped proposal on a leader cut off from its
            // peers, a timeout), the next writes check who leads first. Unless this write may
            // have reached etcd, it is sent again once that is known, not through a follower.
            this.#leader.lost(member);
            if (!reached || isNotSent(err)) {
              leaderLost = true;
              break;
            }
          }
          if (!reached) continue; // skipped: marked down while another member is up
          tried = true;
          if (isNotSent(err)) continue;
          if (repeatable && isUnavailable(err) && !pastDeadline(deadline)) continue;
          throw err;
        }
      }
      if (leaderLost) continue;
      // Every member was skipped: the gates let a call through once all are down.
      if (!tried && last instanceof MemberSkippedError && round > 0) break;
    }
    throw last ?? new MemberSkippedError('none');
  }

  /**
   * Members in random order (the pool's shuffle), so load spreads over a healthy cluster; with
   * `first` (the leader, for a write) that one first.
   */
  #order(first?: Member): Member[] {
    const members = this.#members;
    if (members.length < 2) return members;
    const order = [...members];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      const a = order[i] as Member;
      order[i] = order[j] as Member;
      order[j] = a;
    }
    if (first !== undefined) {
      order.splice(order.indexOf(first), 1);
      order.unshift(first);
    }
    return order;
  }

  /** `Maintenance/Status` of one member: its own id, the leader it knows, and its raft term. */
  async #status(member: Member): Promise<MemberStatus> {
    const call = member
      .session()
      .unary('/etcdserverpb.Maintenance/Status', new Uint8Array(0), STATUS_TIMEOUT_MS);
    const timer = setTimeout(() => call.cancel(), STATUS_TIMEOUT_MS + 100);
    try {
      const body = await call.done;
      const res = decodeStatusResponse(body);
      return { id: res.header?.member_id ?? '0', leader: res.leader, term: BigInt(res.raftTerm) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** One gRPC unary call on `member`: resolves with the response message's bytes. */
  #unary(member: Member, path: string, message: Uint8Array, deadline: number | undefined): Promise<Buffer> {
    const timeoutMs = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
    const call = member.session().unary(path, message, timeoutMs);
    if (timeoutMs === undefined) {
      return call.done.catch((err: unknown) => {
        throw toEtcdError(err);
      });
    }
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        call.cancel();
        // The connection may be silently dead, which keepalive would notice only later: dial
        // again next time.
        member.reset();
        reject(grpcError(GRPC_DEADLINE_EXCEEDED, 'Deadline exceeded'));
      }, timeoutMs);
      call.done.then(
        (body) => {
          clearTimeout(timer);
          resolve(body);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(toEtcdError(err));
        },
      );
    });
  }
}

/** What a member's `Status` says (ids as decimal strings, "0" for none). */
interface MemberStatus {
  readonly id: string;
  readonly leader: string;
  readonly term: bigint;
}

/**
 * Which member takes writes: the one whose own status says it is the leader (so a dead leader,
 * still named by followers until their election timeout, is never picked: it cannot answer).
 * Learned in the background on the first write and every {@link LEADER_CHECK_MS}; after
 * {@link lost}, writes wait for the next one. One round of status calls at a time.
 */
class LeaderRoute {
  readonly #members: readonly Member[];
  readonly #gates: HostGates;
  readonly #status: (member: Member) => Promise<MemberStatus>;
  #leader: Member | undefined;
  /** When the last round of status calls began. */
  #askedAt = 0;
  /** When a write to the leader last failed (writes wait for a new one until LEADER_WAIT_MS after). */
  #lostAt: number | undefined;
  #lookup: Promise<void> | undefined;
  #closed = false;

  constructor(
    members: readonly Member[],
    gates: HostGates,
    status: (member: Member) => Promise<MemberStatus>,
  ) {
    this.#members = members;
    this.#gates = gates;
    this.#status = status;
  }

  /**
   * The member to send a write to first: the leader when known; after a loss, the next leader
   * once found (waiting up to {@link LEADER_WAIT_MS} after the loss and never past `deadline`);
   * undefined when there is one member or none is known.
   */
  async forWrite(deadline: number | undefined): Promise<Member | undefined> {
    if (this.#members.length < 2) return undefined;
    // A call or watch on the leader's host failed since: it may be dead.
    if (this.#leader !== undefined && this.#gates.isDown(this.#leader.host)) this.lost(this.#leader);
    if (this.#leader !== undefined) {
      if (Date.now() - this.#askedAt > LEADER_CHECK_MS) void this.#find();
      return this.#leader;
    }
    if (this.#lostAt === undefined) {
      void this.#find(); // not known yet: this write goes anywhere, the next ones to the leader
      return undefined;
    }
    const until = Math.min(this.#lostAt + LEADER_WAIT_MS, deadline ?? Infinity);
    if (Date.now() >= until) {
      void this.#find(); // waited long enough since the loss: go anywhere, keep looking
      return undefined;
    }
    for (;;) {
      await this.#find();
      if (this.#leader !== undefined || this.#closed) return this.#leader;
      if (Date.now() + LEADER_POLL_MS >= until) return undefined;
      await new Promise((resolve) => setTimeout(resolve, LEADER_POLL_MS));
    }
  }

  /** A write to the leader failed (or it was skipped as down): look for the leader again. */
  lost(member: Member): void {
    if (this.#leader !== member) return;
    this.#leader = undefined;
    this.#lostAt = Date.now();
  }

  close(): void {
    this.#closed = true;
  }

  /** One round of status calls to every member (shared by the writes waiting meanwhile). */
  #find(): Promise<void> {
    this.#lookup ??= this.#ask().finally(() => (this.#lookup = undefined));
    return this.#lookup;
  }

  async #ask(): Promise<void> {
    this.#askedAt = Date.now();
    const answers = await Promise.all(
      this.#members.map(async (member) => {
        try {
          const status = await this.#status(member);
          this.#gates.markAnswered(member.host);
          return { member, status };
        } catch {
          return undefined; // down or unreachable: it cannot be the leader we write to
        }
      }),
    );
    let best: { member: Member; status: MemberStatus } | undefined;
    for (const a of answers) {
      if (a === undefined || a.status.id === '0' || a.status.leader !== a.status.id) continue;
      // An old leader cut off from the others may still think it leads: the newest term wins.
      if (best === undefined || a.status.term > best.status.term) best = a;
    }
    // No member saying it leads changes nothing: during an election the writes keep waiting;
    // otherwise the known leader's own answer may just be slow (a loaded machine), and a leader
    // that is really gone shows by the next write to it failing (lost()).
    if (this.#closed || best === undefined) return;
    this.#leader = best.member;
    this.#lostAt = undefined;
  }
}

/** Marks errors of calls that never reached etcd (see {@link GrpcFailure.notSent}). */
const NOT_SENT = Symbol('capstan.etcd.notSent');

/** A session's failure as the `etcd3` error class of its status (marked when it was not sent). */
function toEtcdError(err: unknown): Error {
  if (err instanceof GrpcFailure) {
    const converted = grpcError(err.code, err.details);
    if (err.notSent) Object.defineProperty(converted, NOT_SENT, { value: true });
    return converted;
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** True for the error of a call that certainly never reached etcd. */
function isNotSent(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { [NOT_SENT]?: boolean })[NOT_SENT] === true;
}

/** True for an UNAVAILABLE failure (etcd3's class of gRPC status 14). */
function isUnavailable(err: unknown): boolean {
  return err instanceof GRPCUnavailableError;
}

function pastDeadline(deadline: number | undefined): boolean {
  return deadline !== undefined && Date.now() >= deadline;
}

/**
 * A `Watch/Watch` stream: requests encoded and responses decoded in etcd3's shapes, failures as
 * etcd3's error classes. Ends and failures are emitted from `setImmediate`, so a stream that
 * fails while it is being opened still reaches the listeners its watch attaches right after;
 * nothing is emitted after {@link cancel}.
 */
class GrpcWatchStream extends EventEmitter implements WatchStream {
  readonly #call: StreamCall | undefined;
  #cancelled = false;

  constructor(member: Member | undefined, onFailure: (err: Error) => void = () => {}) {
    super();
    if (member === undefined) {
      this.#later(new ClientClosedError('etcd'));
      return;
    }
    this.#call = member.session().stream(
      '/etcdserverpb.Watch/Watch',
      {
        message: (bytes) => {
          let response: IWatchResponse;
          try {
            response = decodeWatchResponse(bytes);
          } catch (err) {
            this.#call?.cancel();
            this.#later(grpcError(GRPC_INTERNAL, `malformed watch response: ${(err as Error).message}`));
            return;
          }
          this.emit('data', response);
        },
        end: (failure) => {
          const err = failure === undefined ? undefined : toEtcdError(failure);
          if (err !== undefined && !this.#cancelled) onFailure(err);
          this.#later(err);
        },
      },
      REQUIRE_LEADER,
    );
  }

  write(request: IWatchRequest): void {
    this.#call?.write(encodeWatchRequest(request));
  }

  cancel(): void {
    this.#cancelled = true;
    this.#call?.cancel();
  }

  /** Emits `error` with `err`, or `end` when it is undefined, from `setImmediate` unless cancelled by then. */
  #later(err: Error | undefined): void {
    setImmediate(() => {
      if (this.#cancelled) return;
      if (err === undefined) this.emit('end');
      else this.emit('error', err);
    });
  }
}
