/**
 * The scheduler bench's ceiling subject (`--scheduler-ceiling`), run as `capstan bench binder`:
 * a "scheduler" that does no scheduling work. It lists the nodes once, watches unbound pods
 * (`spec.nodeName=`, as a scheduler's queue does) and POSTs a Binding for each to the next node
 * round-robin, with no filter, score, event or status write. Every scheduler must at least watch
 * its pods and bind each, so on a given server and machine this subject's pods/s bounds what any
 * scheduler can reach there; divided by another scheduler's, it bounds the ratio a faster
 * scheduler could show against it. It ignores every constraint, so it is run on plain pods only.
 */
import { BenchClient } from '../client.js';
import { lineSplitter } from '../lines.js';
import { FlagError, FlagSet, flagsOfSection } from '../../flags/flags.js';
import { readKubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';

/** How long to wait before watching again after the watch ended. */
const REWATCH_MS = 100;

interface WatchLine {
  readonly type?: string;
  readonly object?: {
    readonly metadata?: {
      readonly name?: string;
      readonly namespace?: string;
      readonly resourceVersion?: string;
    };
    readonly spec?: { readonly nodeName?: string };
  };
}

/** A running binder. */
export interface CeilingBinder {
  /** Binds made (201), and bind requests that failed otherwise. */
  readonly counts: () => { bound: number; failed: number };
  /** Stops watching and closes the connections. */
  stop(): void;
}

/**
 * Starts binding every unbound pod of the cluster that `kubeconfig` reaches.
 * @throws Error when the kubeconfig is unusable, the nodes cannot be listed, or there is none.
 */
export async function startCeilingBinder(
  kubeconfig: string,
  log: (line: string) => void,
): Promise<CeilingBinder> {
  const client = new BenchClient(readKubeconfigCredentials(kubeconfig), 2);
  let nodes: string[];
  try {
    const list = await client.expect('GET', '/api/v1/nodes', 200);
    nodes = (JSON.parse(list.body.toString('utf8')) as { items: { metadata: { name: string } }[] }).items.map(
      (n) => n.metadata.name,
    );
  } catch (err) {
    client.close();
    throw err;
  }
  if (nodes.length === 0) {
    client.close();
    throw new Error('no node to bind to');
  }
  let next = 0;
  let bound = 0;
  let failed = 0;
  let stopped = false;

  const bind = async (namespace: string, name: string): Promise<void> => {
    const node = nodes[next++ % nodes.length] as string;
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    });
    try {
      const res = await client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
        body,
        discardBody: true,
      });
      if (res.status === 201) bound++;
      // 409: bound already (a watch that started again re-lists the pods still in flight).
      else if (res.status !== 409) {
        failed++;
        log(`bind ${namespace}/${name} to ${node}: HTTP ${res.status}`);
      }
    } catch (err) {
      failed++;
      if (!stopped) log(`bind ${namespace}/${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const onLine = (line: string): void => {
    let event: WatchLine;
    try {
      event = JSON.parse(line) as WatchLine;
    } catch {
      log(`unreadable watch line: ${line.slice(0, 200)}`);
      return;
    }
    const meta = event.object?.metadata;
    if (event.type !== 'ADDED' || meta?.name === undefined || meta.namespace === undefined) return;
    if ((event.object?.spec?.nodeName ?? '') !== '') return;
    void bind(meta.namespace, meta.name);
  };

  let current: { close(): void } | undefined;
  const watch = (): void => {
    if (stopped) return;
    // From no resourceVersion, the watch starts with every unbound pod (the backlog) as ADDED.
    const stream = client.stream(
      '/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3D',
      lineSplitter((line) => {
        if (line !== '') onLine(line);
      }),
    );
    current = stream;
    void stream.ended.then(() => {
      if (!stopped) setTimeout(watch, REWATCH_MS);
    });
  };
  watch();
  return {
    counts: () => ({ bound, failed }),
    stop: () => {
      stopped = true;
      current?.close();
      client.close();
    },
  };
}

const BINDER_FLAGS = [
  flagsOfSection('Ceiling binder')(
    'kubeconfig',
    'string',
    '',
    'Kubeconfig of the cluster whose pods it binds.',
  ),
];

/**
 * `capstan bench binder --kubeconfig=PATH`: runs the ceiling binder until SIGTERM or SIGINT
 * (the scheduler bench starts it as a process, as it starts the schedulers it measures).
 */
export async function runCeilingBinderCommand(
  argv: readonly string[],
  err: (line: string) => void,
): Promise<number> {
  let kubeconfig = '';
  try {
    const parsed = new FlagSet('capstan bench binder', BINDER_FLAGS).parse(argv);
    if (parsed.args.length === 0) kubeconfig = parsed.values.get('kubeconfig') as string;
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
  }
  if (kubeconfig === '') {
    err('usage: capstan bench binder --kubeconfig=PATH');
    return 2;
  }
  let binder: CeilingBinder;
  try {
    binder = await startCeilingBinder(kubeconfig, err);
  } catch (e) {
    err(`capstan bench binder: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  binder.stop();
  const { bound, failed } = binder.counts();
  err(`capstan bench binder: ${bound} pods bound, ${failed} binds failed`);
  return 0;
}
