/**
 * A stand-in for the scheduler and kubelets in workload controller tests, acting only through the
 * client: it registers fake Nodes (Ready) and writes pod status
 * as a kubelet would: Running and Ready, or Succeeded/Failed with a terminated container, as
 * {@link FakeKubeletOptions.outcome} decides. A pod being deleted is written Failed (exit 137,
 * unless already terminal) and then deleted with grace 0, as a kubelet finishing a graceful
 * deletion does. Pods are not bound (this server does not serve `pods/binding` yet): a pod's
 * node is the one its DaemonSet affinity names, which is all the workload controllers read.
 */
import type { Node, Pod, PodStatus } from '../../src/api/types/core-v1.js';
import { NODES, PODS, SharedInformerFactory, isNotFound, type Client } from '../../src/client/index.js';

/** What the kubelet does with a pod once it runs. */
export type PodOutcome =
  | { readonly phase: 'Running'; readonly ready?: boolean }
  | { readonly phase: 'Succeeded' }
  | { readonly phase: 'Failed'; readonly exitCode?: number }
  /** Leave it Pending. */
  | { readonly phase: 'Pending' };

/** Options of {@link FakeKubelet}. */
export interface FakeKubeletOptions {
  /** Node names to register (default one node, `node-1`). */
  readonly nodes?: readonly string[];
  /** Taints per node name. */
  readonly taints?: Readonly<Record<string, NonNullable<Node['spec']>['taints']>>;
  /** Labels per node name. */
  readonly labels?: Readonly<Record<string, Record<string, string>>>;
  /** The outcome of a pod (default: Running and ready). Called once per pod. */
  readonly outcome?: (pod: Pod) => PodOutcome;
  /** Only pods of this namespace (default: every namespace but kube-system). */
  readonly namespace?: string;
}

/** The fake scheduler and kubelets. */
export class FakeKubelet {
  readonly #client: Client;
  readonly #opts: FakeKubeletOptions;
  readonly #factory: SharedInformerFactory;
  readonly #chains = new Map<string, Promise<void>>();
  readonly #outcomes = new Map<string, PodOutcome>();
  readonly errors: unknown[] = [];
  #next = 0;
  #stopped = false;

  constructor(client: Client, opts: FakeKubeletOptions = {}) {
    this.#client = client;
    this.#opts = opts;
    this.#factory = new SharedInformerFactory(
      client,
      opts.namespace === undefined ? {} : { namespace: opts.namespace },
    );
  }

  get nodes(): readonly string[] {
    return this.#opts.nodes ?? ['node-1'];
  }

  /** Registers the nodes and starts acting on pods. */
  async start(): Promise<void> {
    for (const name of this.nodes) await this.addNode(name);
    const pods = this.#factory.informer<Pod>(PODS);
    pods.addHandler({ add: (p) => this.#enqueue(p), update: (_, p) => this.#enqueue(p) });
    this.#factory.start();
    await this.#factory.waitForSync();
  }

  /** Registers a Ready node. */
  async addNode(name: string): Promise<void> {
    const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(this.#opts.labels?.[name] ?? {}) } },
      spec: { ...(this.#opts.taints?.[name] === undefined ? {} : { taints: this.#opts.taints[name] }) },
    };
    const created = await this.#client.resource<Node>(NODES).create(node);
    created.status = {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          lastHeartbeatTime: t,
          lastTransitionTime: t,
        },
      ],
      capacity: { cpu: '8', memory: '16Gi', pods: '110' },
      allocatable: { cpu: '8', memory: '16Gi', pods: '110' },
    };
    const ready = await this.#client.resource<Node>(NODES).updateStatus(created);
    // The server's admission taints a new node not-ready; on a Ready node the node lifecycle
    // controller lifts it. Played here, keeping the taints the test asked for.
    const wanted = this.#opts.taints?.[name] ?? [];
    const taints = (ready.spec?.taints ?? []).filter(
      (t) =>
        t.key !== 'node.kubernetes.io/not-ready' ||
        wanted.some((w) => w.key === t.key && w.effect === t.effect),
    );
    await this.#client.resource<Node>(NODES).update({ ...ready, spec: { ...ready.spec, taints } });
  }

  /** Stops acting (pending work finishes). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#factory.stop();
    await Promise.allSettled([...this.#chains.values()]);
  }

  #enqueue(pod: Pod): void {
    if (this.#stopped) return;
    if (this.#opts.namespace === undefined && pod.metadata.namespace === 'kube-system') return;
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
    const prev = this.#chains.get(key) ?? Promise.resolve();
    const next = prev
      .then(() => this.#act(pod))
      .catch((err: unknown) => {
        if (!this.#stopped && (process.env['FAKE_KUBELET_DEBUG'] !== undefined || !isNotFound(err)))
          this.errors.push(err);
      });
    this.#chains.set(key, next);
  }

  async #act(pod: Pod): Promise<void> {
    const pods = this.#client.resource<Pod>(PODS);
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const phase = pod.status?.phase;
    const terminal = phase === 'Succeeded' || phase === 'Failed';
    if (pod.metadata.deletionTimestamp !== undefined) {
      if (!terminal)
        await pods.updateStatus(
          { ...pod, status: this.#status(pod, { phase: 'Failed', exitCode: 137 }) },
          { namespace },
        );
      await pods.delete(name, { namespace, gracePeriodSeconds: 0 });
      return;
    }
    if (terminal || phase === 'Running') return;
    const uid = pod.metadata.uid ?? '';
    let outcome = this.#outcomes.get(uid);
    if (outcome === undefined) {
      outcome = this.#opts.outcome?.(pod) ?? { phase: 'Running' };
      this.#outcomes.set(uid, outcome);
    }
    if (outcome.phase === 'Pending') return;
    await pods.updateStatus({ ...pod, status: this.#status(pod, outcome) }, { namespace });
  }

  /** Sets a running pod's phase now (a test moving a pod on). */
  async finish(pod: Pod, outcome: PodOutcome): Promise<void> {
    await this.#client
      .resource<Pod>(PODS)
      .updateStatus(
        { ...pod, status: this.#status(pod, outcome) },
        { namespace: pod.metadata.namespace ?? '' },
      );
  }

  #status(pod: Pod, outcome: PodOutcome): PodStatus {
    const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const running = outcome.phase === 'Running';
    const ready = running && (outcome.ready ?? true);
    const cond = (type: string, ok: boolean): NonNullable<PodStatus['conditions']>[number] => ({
      type,
      status: ok ? 'True' : 'False',
      lastTransitionTime: t,
    });
    const exitCode = outcome.phase === 'Failed' ? (outcome.exitCode ?? 1) : 0;
    return {
      ...(pod.status ?? {}),
      phase: outcome.phase,
      startTime: pod.status?.startTime ?? t,
      hostIP: '10.0.0.1',
      podIP: `10.244.0.${(this.#next++ % 250) + 2}`,
      conditions: [
        cond('PodScheduled', true),
        cond('Initialized', true),
        cond('ContainersReady', ready),
        cond('Ready', ready),
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name ?? '',
        image: c.image ?? '',
        imageID: '',
        ready,
        restartCount: 0,
        started: running,
        state: running
          ? { running: { startedAt: t } }
          : {
              terminated: {
                exitCode,
                reason: exitCode === 0 ? 'Completed' : 'Error',
                startedAt: t,
                finishedAt: t,
              },
            },
      })),
    };
  }
}
