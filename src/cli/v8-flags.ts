/**
 * The V8 flags each `capstan` command sets on itself before it loads its code: one table, so
 * what a process runs with is read in one place. A server on etcd (production, several servers
 * behind one store), a bare API server (`--controllers=`) and the one-shot commands keep V8's
 * defaults: there a server's request rate matters more than its footprint. The long-running
 * components, and the single-node server that runs the whole control plane in-process on its
 * embedded store, trade some allocation throughput for memory. All of these flags are read while the
 * process runs, so `v8.setFlagsFromString` before the component starts works; flags that V8
 * reads only when it sets the heap up (`--max-semi-space-size`) would not, which is why the
 * semi-space growth factor is used instead (checked: set at run time, the new space still grew).
 *
 * Why each flag, with what was measured:
 *
 * - `--heap-growing-percent=100` (every long-running component): the heap grows to twice its
 *   live size before the next full collection, as Go's default (`GOGC=100`) lets kube's
 *   components do; V8 otherwise grows it up to four times under a high allocation rate. On
 *   `capstan bench scheduler --preset=full --scheduler-backlog`: peak RSS 10-40% lower for about
 *   the same CPU (docs/bench/scheduler.md).
 * - `--semi-space-growth-factor=1`: keeps the young generation at V8's initial 1 MiB
 *   semi-spaces. V8 doubles them, up to 16 MiB, when many young objects survive a scavenge (a
 *   burst of thousands of pods, an agent starting) and a process then keeps them: about 30 MiB
 *   of RSS holding nothing live. The growth factor is read at each growth, so 1 keeps the size
 *   (0 crashes node 20). The price is more, shorter scavenges.
 * - `--optimize-for-size` (controller manager, scheduler): the old generation grows by smaller
 *   steps and is released sooner. Holding 10,000 pods, this and the growth factor took the
 *   controller manager from 139 to 105 MiB RSS at about the same pods/s, with more collector
 *   CPU: 15 s instead of 4 s over a scale to 10,000 and a foreground delete
 *   (docs/bench/cluster.md).
 * - `--heap-growing-percent=25` (scheduler, instead of 100): its live heap is mostly its
 *   informers' pods and nodes, which change slowly, so the extra full collections are few. On
 *   `bench scheduler --preset=full` (5,000 pods, 1,000 nodes, live), peak RSS went from 136-148
 *   MiB with V8's defaults to 99.6-106 with the two flags above and 89.5-94.2 with this one, at
 *   the same scheduler CPU within the run-to-run spread.
 * - The real node agent, whose idle RSS counts (issue 32: ≤ 0.7× kubelet's), measured on an idle
 *   agent with no pod (docs/bench/agent.md, 2026-12-03):
 *   - `--no-opt`: no TurboFan. An agent's JavaScript is glue around native work (JSON, TLS,
 *     HTTP/2, gRPC framing), so optimized code buys little: a 30-pod burst cost 6% more CPU
 *     (850 → 900 and 720 → 770 ms), while the optimizing compiler's pages of the `node` binary,
 *     its memory and its code stay out of an idle agent: 57.3 against 62-65 MiB RSS.
 *   - `--no-sparkplug`: no baseline compiler either; its code was 0.7 MiB of an idle agent's
 *     heap. Idle RSS 56.5 against 57.4 MiB, the burst's CPU 710 against 770 ms.
 *   - `--bytecode-old-age=1`: bytecode not run since the last collection is dropped at the next
 *     (V8's default waits 5), so what only start-up ran leaves an idle agent sooner. Idle RSS
 *     53.8 against 54.7 MiB at the same idle CPU; `--stress-flush-code` went no lower and
 *     tripled the idle CPU.
 *
 *   The simulated agent takes only `--no-opt` of these (below): it runs hot JavaScript loops at
 *   a high allocation rate, where the baseline compiler and old bytecode earn their keep.
 * - `--heap-growing-percent=50`: `capstan server` and `capstan cluster` on the embedded store
 *   (no `--etcd-servers`) with their in-process controllers and scheduler (the whole single-node
 *   control plane in one heap, whose RSS is issue 31's figure), and the simulated agent, which
 *   also gets the small young generation, `--optimize-for-size` and `--no-opt`. On `capstan
 *   bench cluster nodes deployment --preset=full` (1,000 simulated nodes, 10,000 pods Running):
 *   the stack's peak RSS went from 759 to 589 MiB (server 625 → 493, simulated agent 149 → 108),
 *   the time to 10,000 pods Running from 36.8 to 42.6 s, the stack's CPU from 45.0 to 56.5 s
 *   (docs/bench/cluster.md). Those runs had the code cache refused (the warm-up then set these
 *   flags too); with it accepted, the same bench took 39.7 s at 554 MiB.
 *   At 100 the server peaked at 525 MiB; at 30, 490 MiB for 10% more CPU again; the small young
 *   generation on the server cost 40% in time (51.4 s) for 36 MiB less. `--no-opt` then took
 *   the simulated agent from 110 to 99 MiB at the same time and CPU, and 1,000 idle nodes from
 *   110 to 66 MiB at 3.73% of a core (3.68% before). The flags are process-wide, so a server on
 *   etcd keeps V8's defaults: its write rate and failover are issue 34's figures.
 */

const LIKE_GO = '--heap-growing-percent=100';
const HALF_GROWTH = '--heap-growing-percent=50';
const SMALL_YOUNG_GENERATION = '--semi-space-growth-factor=1';

/** Each long-running role's flags, in the order they are set. */
const ROLE_FLAGS: Readonly<Record<string, readonly string[]>> = {
  'controller-manager': [LIKE_GO, SMALL_YOUNG_GENERATION, '--optimize-for-size'],
  scheduler: [SMALL_YOUNG_GENERATION, '--optimize-for-size', '--heap-growing-percent=25'],
  proxy: [LIKE_GO],
  agent: [LIKE_GO, '--no-opt', '--no-sparkplug', SMALL_YOUNG_GENERATION, '--bytecode-old-age=1'],
  'simulated-agent': [HALF_GROWTH, SMALL_YOUNG_GENERATION, '--optimize-for-size', '--no-opt'],
  'single-node-control-plane': [HALF_GROWTH],
};

/** True when `capstan agent` runs simulated nodes. */
export function isSimulatedAgent(args: readonly string[]): boolean {
  return args.includes('--simulate') || args.includes('--simulate=true');
}

/** The value of the last `--name=V` or `--name V` in `args`, or undefined when it is not given. */
function lastValueOf(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
    else if (arg === name) value = args[i + 1] ?? '';
  });
  return value;
}

/**
 * True when `capstan server` or `capstan cluster` runs no in-process controller and no scheduler:
 * its last `--controllers` has an empty value (`--controllers=` or `--controllers ''`).
 */
export function isBareServer(args: readonly string[]): boolean {
  return lastValueOf(args, '--controllers')?.trim() === '';
}

/** True when `args` name etcd servers (`--etcd-servers=URL,...` or `--etcd-servers URL,...`). */
export function isOnEtcd(args: readonly string[]): boolean {
  return (lastValueOf(args, '--etcd-servers') ?? '').trim() !== '';
}

/** The row of {@link ROLE_FLAGS} that `capstan <command> <args>` runs as. */
function roleOf(command: string, args: readonly string[]): string {
  if (command === 'agent' && isSimulatedAgent(args)) return 'simulated-agent';
  const server = command === 'server' || command === 'cluster';
  if (server && !isBareServer(args) && !isOnEtcd(args)) return 'single-node-control-plane';
  return command;
}

/** The V8 flags `capstan <command> <args>` sets on itself; none for servers on etcd or bare, and one-shot commands. */
export function v8FlagsOf(command: string | undefined, args: readonly string[]): readonly string[] {
  if (command === undefined) return [];
  const role = roleOf(command, args);
  return Object.hasOwn(ROLE_FLAGS, role) ? (ROLE_FLAGS[role] as readonly string[]) : [];
}
