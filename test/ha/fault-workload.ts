/**
 * The fault test's clients: writers that create ConfigMaps (and Services, for cluster IPs)
 * through the servers in turn, and watchers that follow the ConfigMaps, each resuming on the next
 * server from the last resourceVersion it saw whenever its watch ends.
 *
 * A create is *acknowledged* (201), *refused* (a 4xx, or no connection at all: it never reached
 * a server) or *uncertain* (a 5xx, or a connection lost after the request was sent: its fate is
 * unknown, as for any client). A writer retries a create that was refused for want of a
 * connection on the next server under the same name; after an uncertain one it moves on.
 */
import { request } from 'node:https';
import type { ServerHost } from './fault-cluster.js';

export const NS = 'ha-fault';

/** What the writers did. */
export interface WriteLog {
  readonly acknowledged: Map<string, string>;
  readonly refused: Set<string>;
  readonly uncertain: Map<string, string>;
  /** Time (ms) of every acknowledgement, in order. */
  readonly ackTimes: number[];
  readonly serviceIps: Map<string, string>;
  /** Every attempt, in the order they ended (for looking into a slow failover). */
  readonly attempts: Attempt[];
}

/** One request of a writer: when it was sent and answered, where, and how. */
export interface Attempt {
  readonly writer: number;
  readonly server: string;
  readonly start: number;
  readonly end: number;
  readonly status: number;
  readonly error?: string;
}

/** Writers running until `stop()`. */
export class Writers {
  readonly log: WriteLog = {
    acknowledged: new Map(),
    refused: new Set(),
    uncertain: new Map(),
    ackTimes: [],
    serviceIps: new Map(),
    attempts: [],
  };
  #running = true;
  readonly #loops: Promise<void>[];

  constructor(
    readonly servers: readonly ServerHost[],
    count: number,
    /** Every `serviceEvery`-th write of writer 0 creates a Service. */
    readonly serviceEvery = 4,
    /** Prefixed to every name, so that several runs on one cluster do not reuse names. */
    readonly namePrefix = '',
  ) {
    this.#loops = Array.from({ length: count }, (_, w) => this.#writer(w));
  }

  async #writer(w: number): Promise<void> {
    let turn = w;
    for (let i = 0; this.#running; i++) {
      const service = w === 0 && i % this.serviceEvery === 0;
      const name = `${this.namePrefix}${service ? `svc-${i}` : `w${w}-${i}`}`;
      const path = service ? `/api/v1/namespaces/${NS}/services` : `/api/v1/namespaces/${NS}/configmaps`;
      const body = service
        ? { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }] } }
        : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { w: String(w) } };
      for (let attempt = 0; ; attempt++) {
        const server = this.servers[turn++ % this.servers.length]!;
        const start = Date.now();
        const a = await server.call('POST', path, body);
        this.log.attempts.push({
          writer: w,
          server: server.host.name,
          start,
          end: Date.now(),
          status: a.status,
          ...(a.status === 201
            ? {}
            : { error: a.error ?? JSON.stringify(a.json['message'] ?? a.json).slice(0, 160) }),
        });
        if (a.status === 201) {
          const meta = a.json['metadata'] as { resourceVersion: string };
          if (service) {
            this.log.serviceIps.set(name, String((a.json['spec'] as { clusterIP: string }).clusterIP));
          } else {
            this.log.acknowledged.set(name, meta.resourceVersion);
          }
          this.log.ackTimes.push(Date.now());
        } else if (a.failure === 'refused') {
          // Never reached a server: try the next one (all down: wait a little first).
          if (attempt % this.servers.length === this.servers.length - 1)
            await new Promise((r) => setTimeout(r, 200));
          if (this.#running) continue;
          this.log.refused.add(name);
        } else if (a.status >= 400 && a.status < 500) {
          this.log.refused.add(name);
        } else {
          this.log.uncertain.set(
            name,
            `${server.host.name}: ${a.status} ${a.error ?? JSON.stringify(a.json).slice(0, 200)}`,
          );
          await new Promise((r) => setTimeout(r, 100));
        }
        break;
      }
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }
}

/** Nodes the fault test's pods are bound to: objects only, with no agent behind them. */
export const NODES = ['ha-node-0', 'ha-node-1', 'ha-node-2'];

/** A Node with room for every pod of a run. */
export function nodeBody(name: string): Record<string, unknown> {
  const room = { cpu: '100', memory: '1Ti', pods: '10000' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: { capacity: room, allocatable: room },
  };
}

/**
 * Creates a pod through the servers in turn every `everyMs` until `stop()`, for the schedulers
 * to bind. The pods tolerate every taint: with no agent, the nodes turn NotReady and get kube's
 * not-ready taints, which must not keep the pods from being bound or evict them.
 */
export class PodWriter {
  /** Names of the pods whose create was acknowledged. */
  readonly acknowledged = new Set<string>();
  #running = true;
  readonly #loop: Promise<void>;

  constructor(
    readonly servers: readonly ServerHost[],
    readonly everyMs = 500,
  ) {
    this.#loop = this.#write();
  }

  async #write(): Promise<void> {
    for (let i = 0; this.#running; i++) {
      const name = `p-${i}`;
      const a = await this.servers[i % this.servers.length]!.call('POST', `/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
          tolerations: [{ operator: 'Exists' }],
          automountServiceAccountToken: false,
        },
      });
      if (a.status === 201) this.acknowledged.add(name);
      await new Promise((r) => setTimeout(r, this.everyMs));
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}

/** One watch event seen. */
export interface Seen {
  readonly type: string;
  readonly name: string;
  readonly rv: number;
  readonly server: string;
}

/** A watcher of the namespace's ConfigMaps that resumes on the next server. */
export class Watcher {
  readonly events: Seen[] = [];
  readonly problems: string[] = [];
  reconnects = 0;
  lastRv: number;
  #turn: number;
  #running = true;
  #req: ReturnType<typeof request> | undefined;
  readonly #loop: Promise<void>;

  constructor(
    readonly servers: readonly ServerHost[],
    start: number,
    fromRv: number,
  ) {
    this.#turn = start;
    this.lastRv = fromRv;
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const server = this.servers[this.#turn % this.servers.length]!;
      await this.#watchOnce(server);
      if (!this.#running) break;
      this.#turn += 1;
      this.reconnects += 1;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  #watchOnce(server: ServerHost): Promise<void> {
    return new Promise((done) => {
      const path =
        `/api/v1/namespaces/${NS}/configmaps?watch=1&allowWatchBookmarks=true` +
        `&resourceVersion=${this.lastRv}&timeoutSeconds=${20 + Math.floor(Math.random() * 20)}`;
      let buffered = '';
      // A watch that hears nothing (not even a bookmark) for this long is given up and resumed elsewhere.
      let idle: NodeJS.Timeout | undefined;
      const poke = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => req.destroy(new Error('watch idle')), 70_000);
      };
      const req = request(`${server.url}${path}`, { ...server.tls, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            // 5xx while a server's cache starts or etcd recovers: try elsewhere; a 410 is a problem.
            if (res.statusCode === 410) this.problems.push(`410 on ${server.host.name} from ${this.lastRv}`);
            clearTimeout(idle);
            done();
          });
          return;
        }
        poke();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          poke();
          buffered += chunk;
          for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line !== '') this.#event(server, line);
          }
        });
        res.on('end', () => {
          clearTimeout(idle);
          done();
        });
        res.on('error', () => undefined);
      });
      this.#req = req;
      req.on('error', () => {
        clearTimeout(idle);
        done();
      });
      req.on('close', () => {
        clearTimeout(idle);
        done();
      });
      req.end();
    });
  }

  #event(server: ServerHost, line: string): void {
    const ev = JSON.parse(line) as {
      type: string;
      object: { code?: number; message?: string; metadata?: { name?: string; resourceVersion?: string } };
    };
    if (ev.type === 'ERROR') {
      if (ev.object.code === 410)
        this.problems.push(`410 on ${server.host.name} from ${this.lastRv}: ${ev.object.message ?? ''}`);
      this.#req?.destroy();
      return;
    }
    const rv = Number(ev.object.metadata?.resourceVersion ?? 0);
    if (ev.type === 'BOOKMARK') {
      if (rv > this.lastRv) this.lastRv = rv;
      return;
    }
    if (!(rv > this.lastRv))
      this.problems.push(
        `${ev.type} ${ev.object.metadata?.name} at ${rv} after ${this.lastRv} (on ${server.host.name})`,
      );
    this.lastRv = Math.max(rv, this.lastRv);
    this.events.push({ type: ev.type, name: ev.object.metadata?.name ?? '', rv, server: server.host.name });
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#req?.destroy();
    await this.#loop;
  }
}
