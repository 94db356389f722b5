/**
 * A stand-in for nodes in controller tests (no node agent exists yet): it polls the pods, binds
 * unscheduled ones to `nodeName` (pods/binding, as a scheduler does), reports bound pods Running
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

async function tick(
  url: string,
  tls: AdminTls,
  opts: FakeKubeletOptions,
  readied: Set<string>,
): Promise<void> {
  const node = opts.nodeName ?? 'fake-node';
  for (const ns of opts.namespaces) {
    const list = await adminJson(`${url}/api/v1/namespaces/${ns}/pods`, tls);
    if (list.status !== 200) continue;
    for (const pod of (list.json['items'] ?? []) as FakePod[]) {
      const base = `${url}/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`;
      if (pod.metadata.deletionTimestamp !== undefined) {
        if (pod.spec.nodeName !== undefined) {
          await adminJson(base, tls, 'DELETE', {
            gracePeriodSeconds: 0,
            preconditions: { uid: pod.metadata.uid },
          });
        }
        continue;
      }
      if (pod.spec.nodeName === undefined) {
        await adminJson(`${base}/binding`, tls, 'POST', {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: pod.metadata.name, namespace: ns },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        });
        continue;
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
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        await tick(url, tls, opts, readied);
      } catch {
        // The server may be shutting down; the next poll tries again.
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
