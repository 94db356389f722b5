/**
 * One real node for end-to-end tests: a private containerd ({@link startContainerd}), an
 * in-process Capstan server, and `capstan agent` registered as `node` on them, with helpers to
 * run pods on it through kubectl 1.33. A blackhole route covers the Service range while pods run
 * (the agent's CNI network expects one). `stop()` removes everything: the agent, the server,
 * containerd and all it made, the route (if this node added it) and the agent's bridge (if no
 * other suite's pods use it).
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, type AgentWiring } from '../../src/agent/agent.js';
import { agentFlagSet, resolveConfig } from '../../src/agent/config.js';
import { bootstrapClientCertificate } from '../../src/agent/tls-bootstrap.js';
import {
  BUSYBOX_IMAGE,
  removeBridgeIfUnused,
  startContainerd,
  type Containerd,
  unmountUnder,
} from './containerd.js';
import { kubectlOutput } from './kubectl.js';
import { startTestServer, type TestServer } from './server.js';

const run = promisify(execFile);
const SERVICE_RANGE = '10.0.0.0/24';

/** Options of {@link startAgentNode}. */
export interface AgentNodeOptions {
  /** The node's name. */
  readonly node: string;
  /** The node's pod CIDR (a /24 no other suite uses). */
  readonly podCIDR: string;
  /** More `capstan server` flags. */
  readonly serverArgs?: readonly string[];
  /** More `capstan agent` flags (after the node's own, so they win). */
  readonly agentArgs?: readonly string[];
  /** The server's in-process controllers (see startTestServer). */
  readonly controllers?: readonly string[];
  /**
   * The agent's pod bridge; removed on stop when no other pod uses it. Default: one of this
   * node's own (`cap` and a hash of the node name), so that suites running at once with other
   * pod CIDRs never share a bridge (a shared one keeps the first suite's address).
   */
  readonly bridge?: string;
  /** The agent's in-process settings. */
  readonly extras?: AgentWiring;
  /**
   * Runs once the server is up, before the agent starts; answers more agent flags. With
   * `--bootstrap-kubeconfig` among them, the agent's TLS bootstrap runs first, as
   * `capstan agent` does it.
   */
  prepare?(server: TestServer, dir: string): Promise<readonly string[]>;
}

/** A running node (see the module comment). */
export interface AgentNode {
  readonly node: string;
  readonly dir: string;
  readonly ctrd: Containerd;
  readonly server: TestServer;
  readonly agent: Agent;
  /** kubectl 1.33 as the admin; resolves with stdout, rejects on failure. */
  kubectl(...args: string[]): Promise<string>;
  /** A pod on this node with one container `c` (busybox) and `container`'s fields. */
  applyPod(name: string, container: Record<string, unknown>, spec?: Record<string, unknown>): Promise<void>;
  /** Stops the agent and starts a new one with the same flags (it adopts the running pods). */
  restartAgent(): Promise<void>;
  /** Waits up to 60 s for the pods to be Running. */
  running(...pods: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** Why `pod` is not Running: its phase, status and events, for the failure message. */
async function notRunning(
  kubectl: (...args: string[]) => Promise<string>,
  pod: string,
  phase: string,
): Promise<string> {
  const said = (p: Promise<string>): Promise<string> => p.catch((err: unknown) => String(err));
  const status = await said(kubectl('get', 'pod', pod, '-o', 'jsonpath={.status}'));
  const events = await said(
    kubectl(
      'get',
      'events',
      '--field-selector',
      `involvedObject.name=${pod}`,
      '-o',
      'custom-columns=REASON:.reason,MESSAGE:.message',
    ),
  );
  return `pod ${pod} is ${phase}, not Running, after 60 s; status ${status}; events:\n${events}`;
}

/** Starts containerd, a server and an agent (about 20 s with the image build). */
export async function startAgentNode(opts: AgentNodeOptions): Promise<AgentNode> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-agent-node-'));
  const bridge = opts.bridge ?? `cap${createHash('sha256').update(opts.node).digest('hex').slice(0, 8)}`;
  let ctrd: Containerd | undefined;
  let server: TestServer | undefined;
  let agent: Agent | undefined;
  let addedRoute = false;
  const stop = async (): Promise<void> => {
    await agent?.stop();
    await server?.close();
    await ctrd?.stop();
    await removeBridgeIfUnused(bridge);
    if (addedRoute) await run('ip', ['route', 'del', 'blackhole', SERVICE_RANGE]).catch(() => undefined);
    // Pods left running keep their volumes' tmpfs mounts.
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    ctrd = await startContainerd();
    const srv = await startTestServer({
      args: opts.serverArgs ?? [],
      ...(opts.controllers === undefined ? {} : { controllers: opts.controllers }),
    });
    server = srv;
    addedRoute = await run('ip', ['route', 'add', 'blackhole', SERVICE_RANGE]).then(
      () => true,
      () => false, // already there (another suite): leave it to its owner
    );
    const prepared = opts.prepare ? await opts.prepare(srv, dir) : [];
    const config = resolveConfig(
      agentFlagSet().parse([
        `--kubeconfig=${srv.kubeconfigPath}`,
        `--hostname-override=${opts.node}`,
        `--container-runtime-endpoint=${ctrd.endpoint}`,
        `--root-dir=${join(dir, 'root')}`,
        `--pod-logs-dir=${join(dir, 'logs')}`,
        `--cni-conf-dir=${ctrd.cniConfDir}`,
        `--cgroup-root=${ctrd.cgroupParent}`,
        '--address=127.0.0.1',
        '--port=0',
        '--healthz-port=0',
        '--node-ip=127.0.0.1',
        `--pod-cidr=${opts.podCIDR}`,
        `--cni-bridge=${bridge}`,
        ...(opts.agentArgs ?? []),
        ...prepared,
      ]),
    );
    if (config.bootstrapKubeconfig) {
      await bootstrapClientCertificate({
        kubeconfig: config.kubeconfig,
        bootstrapKubeconfig: config.bootstrapKubeconfig,
        certDir: config.certDir,
        nodeName: opts.node,
        timeoutMs: 60_000,
      });
    }
    let current = new Agent(config, opts.extras);
    agent = current;
    await current.start();
    const kubectl = (...args: string[]): Promise<string> => kubectlOutput('1.33', args, srv.kubeconfigPath);
    return {
      node: opts.node,
      dir,
      ctrd,
      server: srv,
      get agent() {
        return current;
      },
      kubectl,
      async restartAgent() {
        await current.stop();
        current = new Agent(config, opts.extras);
        agent = current;
        await current.start();
      },
      async applyPod(name, container, spec = {}) {
        const file = join(dir, `${name}.json`);
        const pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: 'default' },
          spec: {
            nodeName: opts.node,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: BUSYBOX_IMAGE, ...container }],
            ...spec,
          },
        };
        await writeFile(file, JSON.stringify(pod));
        await kubectl('apply', '-f', file);
      },
      async running(...pods) {
        const deadline = Date.now() + 60_000;
        for (const pod of pods) {
          let phase = '';
          while ((phase = await kubectl('get', 'pod', pod, '-o', 'jsonpath={.status.phase}')) !== 'Running') {
            if (Date.now() > deadline) throw new Error(await notRunning(kubectl, pod, phase));
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      },
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
