/**
 * Hosts for the HA fault tests: each etcd member and each Capstan server runs in its own network
 * namespace, wired by a veth pair to one bridge this harness creates in the root namespace (so
 * the test process, the clients, reach every host). Names start with `ha` and a random tag (or
 * `$CAPSTAN_HA_TAG`), the subnet is a random unused 10.213.x.0/24, and `destroy()` kills every
 * process and deletes every namespace and the bridge it made, even after a failure. Processes run
 * under `setpriv --pdeathsig SIGKILL`, so they die with the test process too.
 *
 * A partition is an nftables table inside the partitioned host's own namespace that drops its
 * traffic to and from the named peers; healing deletes that table.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why these tests cannot run here, or undefined when they can. */
export function haHostsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  for (const tool of ['ip', 'nft', 'setpriv']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

/** A 10.213.x /24 that no route of this machine covers yet (another run's bridge, say). */
function freeSubnet(): string {
  const routes = execFileSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' });
  for (;;) {
    const subnet = `10.213.${randomInt(0, 250)}`;
    if (!routes.includes(`${subnet}.0/24`)) return subnet;
  }
}

/** The tag of a run's names: `given` when it is 1 to 4 letters or digits, else 4 random hex digits. */
function haTag(given: string | undefined): string {
  if (given === undefined) return randomBytes(2).toString('hex');
  if (!/^[a-z0-9]{1,4}$/.test(given)) throw new Error(`CAPSTAN_HA_TAG ${given}: want 1 to 4 of a-z, 0-9`);
  return given;
}

/** One host: a namespace with one address on the bridge. */
export interface Host {
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
}

/** A line a process printed, with the time (ms, `Date.now()`) the test received it. */
export interface LogLine {
  readonly at: number;
  readonly text: string;
}

/** A process in a host's namespace; replaced by `start()` after a kill. */
export class HostProcess {
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  /** Every line of every incarnation, in arrival order. */
  readonly lines: LogLine[] = [];
  /** Incarnations started so far. */
  starts = 0;

  constructor(
    readonly host: Host,
    readonly command: readonly string[],
    readonly env: Readonly<Record<string, string>> = {},
  ) {}

  get running(): boolean {
    return this.#child !== undefined;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the process (it must not be running). */
  start(): void {
    if (this.#child !== undefined) throw new Error(`${this.host.name}: already running`);
    const child = spawn(
      'ip',
      ['netns', 'exec', this.host.ns, 'setpriv', '--pdeathsig', 'SIGKILL', ...this.command],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.env } },
    );
    this.starts += 1;
    const incarnation = this.starts;
    this.#child = child;
    const flushes: (() => void)[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        buffered += chunk;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          this.lines.push({ at: Date.now(), text: `[${incarnation}] ${buffered.slice(0, nl)}` });
          buffered = buffered.slice(nl + 1);
        }
      });
      // A last line without a newline (a crash's message, say) is kept too.
      flushes.push(() => {
        if (buffered !== '') this.lines.push({ at: Date.now(), text: `[${incarnation}] ${buffered}` });
        buffered = '';
      });
    }
    this.#exited = new Promise((resolve) => {
      let ended = false;
      const end = (how: string): void => {
        if (ended) return;
        ended = true;
        for (const flush of flushes) flush();
        this.lines.push({ at: Date.now(), text: `[${incarnation}] ${how}` });
        if (this.#child === child) this.#child = undefined;
        resolve();
      };
      // 'close' comes after the output pipes are drained, so what a dying process wrote is in
      // `lines` before the process counts as stopped. A grandchild holding the pipes open must
      // not keep it running, hence the bound after 'exit'.
      child.once('exit', (code, signal) => {
        const how = `exited (code ${code ?? '-'}, signal ${signal ?? '-'})`;
        child.once('close', () => end(how));
        setTimeout(() => end(how), 2_000).unref();
      });
      child.once('error', (err) => end(`failed to start: ${err.message}`));
    });
  }

  /** Sends `signal` and waits for the exit (SIGKILL after 10 s). */
  async kill(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await this.#exited;
    clearTimeout(timer);
  }

  /** The last lines, for failure messages. */
  tail(n = 20): string {
    return this.lines
      .slice(-n)
      .map((l) => l.text)
      .join('\n');
  }
}

/** The bridge, the hosts on it, and the processes started on them. */
export class HostNet {
  /** `$CAPSTAN_HA_TAG` (up to 4 letters or digits, so that a run's names are its own), else random. */
  readonly tag = haTag(process.env['CAPSTAN_HA_TAG']);
  readonly bridge = `ha${this.tag}br`;
  readonly subnet = freeSubnet();
  readonly gateway = `${this.subnet}.1`;
  readonly dir = mkdtempSync(join(tmpdir(), 'capstan-ha-'));
  readonly #hosts: Host[] = [];
  readonly #processes: HostProcess[] = [];
  #bridgeMade = false;

  constructor() {
    try {
      execFileSync('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
      this.#bridgeMade = true;
      execFileSync('ip', ['addr', 'add', `${this.gateway}/24`, 'dev', this.bridge]);
      execFileSync('ip', ['link', 'set', this.bridge, 'up']);
    } catch (err) {
      void this.destroy();
      throw err;
    }
  }

  /** A host named `name` (at most 8 characters) at `<subnet>.<octet>`. */
  addHost(name: string, octet: number): Host {
    const ns = `ha${this.tag}-${name}`;
    execFileSync('ip', ['netns', 'add', ns]);
    const host = { name, ns, ip: `${this.subnet}.${octet}` };
    this.#hosts.push(host);
    const outside = `ha${this.tag}${name}`.slice(0, 15);
    execFileSync('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    execFileSync('ip', ['link', 'set', outside, 'master', this.bridge, 'up']);
    const inNs = (...args: string[]): void => void execFileSync('ip', ['-n', ns, ...args]);
    inNs('addr', 'add', `${host.ip}/24`, 'dev', 'eth0');
    inNs('link', 'set', 'eth0', 'up');
    inNs('link', 'set', 'lo', 'up');
    return host;
  }

  /** A process on `host`; `destroy()` kills it. */
  process(host: Host, command: readonly string[], env: Record<string, string> = {}): HostProcess {
    const p = new HostProcess(host, command, env);
    this.#processes.push(p);
    return p;
  }

  /** Drops every packet between `host` and `peers`, inside `host`'s namespace. */
  partition(host: Host, peers: readonly Host[]): void {
    const set = peers.map((p) => p.ip).join(', ');
    const rules = [
      `table ip ha_partition {`,
      `  chain input { type filter hook input priority 0; ip saddr { ${set} } drop; }`,
      `  chain output { type filter hook output priority 0; ip daddr { ${set} } drop; }`,
      `}`,
    ].join('\n');
    execFileSync('ip', ['netns', 'exec', host.ns, 'nft', '-f', '-'], { input: rules });
  }

  /** Removes `host`'s partition. */
  heal(host: Host): void {
    execFileSync('ip', ['netns', 'exec', host.ns, 'nft', 'delete', 'table', 'ip', 'ha_partition']);
  }

  /** Kills every process, deletes every namespace and the bridge, removes the temp dir. */
  async destroy(): Promise<void> {
    await Promise.all(this.#processes.map((p) => p.kill('SIGKILL')));
    for (const h of this.#hosts.splice(0)) {
      try {
        execFileSync('ip', ['netns', 'del', h.ns]);
      } catch {
        // already gone
      }
    }
    if (this.#bridgeMade) {
      try {
        execFileSync('ip', ['link', 'del', this.bridge]);
      } catch {
        // already gone
      }
      this.#bridgeMade = false;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
