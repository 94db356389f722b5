/**
 * A stand-in for nodes in controller tests (no node agent exists yet): it polls the pods, binds
 * unscheduled ones to `nodeName` (pods/binding, as a scheduler does, where the server serves it;
 * else pods stay unbound), reports pods Running
 * and Ready (pods/status, as a kubelet does) once `ready(pod)` allows, and finishes the deletion
 * of pods being deleted gracefully (a kubelet's final zero-grace delete). Only pods of the
 * namespaces it is given are touched.
 */
import { adminJson, adminTls, type AdminTls } from './https.js';

/** A pod as the fake reads it. */
export interface FakePod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind?: string; name?: string; uid?: string }[];
  };
  spec: { nodeName?: string; containers: { name: string; image?: string }[] };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

/** Options of {@link startFakeKubelet}. */
export interface FakeKubeletOptions {
  readonly namespaces: readonly string[];
  readonly nodeName?: string;
  /** Whether a bound pod may turn Ready now (default: always). Re-asked on every poll. */
  readonly ready?: (pod: FakePod) => boolean;
  readonly pollMs?: number;
}

/** A running fake. */
export interface FakeKubelet {
  /** Pods it reported Ready, by name (ever). */
  readonly readied: ReadonlySet<string>;
  stop(): Promise<void>;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** What the fake learned about the server: whether it serves pods/binding (the scheduler's). */
interface ServerFacts {
  bindingServed: boolean;
}

async function tick(
  url: string,
  tls: AdminTls,
  opts: FakeKubeletOptions,
  readied: Set<string>,
  facts: ServerFacts,
): Promise<void> {
  const node = opts.nodeName ?? 'fake-node';
  for (const ns of opts.namespaces) {
    const list = await adminJson(`${url}/api/v1/namespaces/${ns}/pods`, tls);
    if (list.status !== 200) continue;
    for (const pod of (list.json['items'] ?? []) as FakePod[]) {
      const base = `${url}/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`;
      if (pod.metadata.deletionTimestamp !== undefined) {
        if (pod.spec.nodeName !== undefined) {
          await adminJson(`${base}?gracePeriodSeconds=0`, tls, 'DELETE');
        }
        continue;
      }
      if (pod.spec.nodeName === undefined && facts.bindingServed) {
        const bound = await adminJson(`${base}/binding`, tls, 'POST', {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: pod.metadata.name, namespace: ns },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        });
        // A server without pods/binding: pods run unbound (and are deleted at once, not gracefully).
        if (
          bound.status === 404 &&
          bound.json['reason'] === 'NotFound' &&
          bound.json['details'] !== undefined
        ) {
          const details = bound.json['details'] as Record<string, unknown>;
          if (details['name'] === undefined) facts.bindingServed = false;
        }
        if (facts.bindingServed) continue;
      }
      const isReady = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      if (isReady || !(opts.ready?.(pod) ?? true)) continue;
      const now = rfc3339(Date.now());
      const condition = (type: string): Record<string, unknown> => ({
        type,
        status: 'True',
        lastTransitionTime: now,
      });
      const res = await adminJson(
        `${base}/status`,
        tls,
        'PATCH',
        {
          status: {
            phase: 'Running',
            hostIP: '10.0.0.10',
            podIP: '10.244.0.10',
            startTime: now,
            conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(condition),
            containerStatuses: pod.spec.containers.map((c) => ({
              name: c.name,
              image: c.image ?? '',
              imageID: '',
              ready: true,
              started: true,
              restartCount: 0,
              state: { running: { startedAt: now } },
            })),
          },
        },
        { 'content-type': 'application/merge-patch+json' },
      );
      if (res.status === 200) readied.add(pod.metadata.name);
    }
  }
}

/** Starts polling; `stop()` it in afterAll. */
export function startFakeKubelet(kubeconfigPath: string, url: string, opts: FakeKubeletOptions): FakeKubelet {
  const tls = adminTls(kubeconfigPath);
  const readied = new Set<string>();
  const facts: ServerFacts = { bindingServed: true };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        await tick(url, tls, opts, readied, facts);
      } catch (err) {
        // The server may be shutting down; the next poll tries again.
        if (process.env['CAPSTAN_TEST_LOGS'] === '1') console.log('fake kubelet:', err);
      }
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
    }
  })();
  return {
    readied,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
