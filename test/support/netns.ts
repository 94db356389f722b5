/**
 * Network namespaces as hosts for network tests: a "node" namespace with a bridge (the pod
 * network's gateway) and "pod" namespaces wired to it by veth pairs, each serving HTTP with
 * busybox. Everything lives inside namespaces this harness creates, so no traffic can leave
 * the machine, and `destroy()` removes it all (deleting a namespace removes its links, routes
 * and nftables tables). Needs root, `ip`, `nft`, `curl` and busybox: under CI=true a missing
 * tool fails the suite instead of skipping it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Why network-namespace tests cannot run here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  for (const tool of ['ip', 'nft', 'curl', 'busybox']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

/** A pod namespace. */
export interface PodHost {
  readonly ns: string;
  readonly ip: string;
}

/** A node namespace with its bridge and pods. */
export class NodeHost {
  readonly ns: string;
  readonly gateway: string;
  readonly #prefix: string;
  readonly #namespaces: string[] = [];
  readonly #servers: ChildProcess[] = [];
  readonly #dir = mkdtempSync(join(tmpdir(), 'capstan-netns-'));
  #links = 0;

  /** Creates the node namespace with bridge `capbr0` at `<subnet>.1/24` and a route for the service range. */
  constructor(
    readonly subnet = '10.244.0',
    serviceCidr = '10.0.0.0/24',
  ) {
    this.#prefix = `capt${randomBytes(3).toString('hex')}`;
    this.ns = this.#netns('node');
    this.gateway = `${subnet}.1`;
    this.#ip('link', 'add', 'capbr0', 'type', 'bridge');
    this.#ip('addr', 'add', `${this.gateway}/24`, 'dev', 'capbr0');
    this.#ip('link', 'set', 'capbr0', 'up');
    this.#ip('link', 'set', 'lo', 'up');
    // Locally generated traffic needs a route before the nat output hook rewrites it; the
    // namespace has no uplink, so an unrewritten packet still goes nowhere.
    this.#ip('route', 'add', serviceCidr, 'dev', 'capbr0');
    execFileSync('ip', ['netns', 'exec', this.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  }

  #netns(role: string): string {
    const ns = `${this.#prefix}-${role}`;
    execFileSync('ip', ['netns', 'add', ns]);
    this.#namespaces.push(ns);
    return ns;
  }

  #ip(...args: string[]): void {
    execFileSync('ip', ['-n', this.ns, ...args]);
  }

  /** A pod at `<subnet>.<host>` serving `body` over HTTP on `port`, its bridge port in hairpin mode (as CNI's hairpinMode). */
  addPod(host: number, body: string, port = 8080): PodHost {
    const ns = this.#netns(`pod${host}`);
    const ip = `${this.subnet}.${host}`;
    const n = this.#links++;
    execFileSync('ip', [
      'link',
      'add',
      `vp${n}`,
      'netns',
      ns,
      'type',
      'veth',
      'peer',
      'name',
      `vh${n}`,
      'netns',
      this.ns,
    ]);
    this.#ip('link', 'set', `vh${n}`, 'master', 'capbr0', 'up');
    this.#ip('link', 'set', `vh${n}`, 'type', 'bridge_slave', 'hairpin', 'on');
    execFileSync('ip', ['-n', ns, 'addr', 'add', `${ip}/24`, 'dev', `vp${n}`]);
    execFileSync('ip', ['-n', ns, 'link', 'set', `vp${n}`, 'up']);
    execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    execFileSync('ip', ['-n', ns, 'route', 'add', 'default', 'via', this.gateway]);
    const root = join(this.#dir, `pod${host}`);
    execFileSync('mkdir', ['-p', root]);
    writeFileSync(join(root, 'index.html'), `${body}\n`);
    const server = spawn(
      'ip',
      ['netns', 'exec', ns, 'busybox', 'httpd', '-f', '-p', String(port), '-h', root],
      {
        stdio: 'ignore',
      },
    );
    this.#servers.push(server);
    return { ns, ip };
  }

  /** `curl` from a namespace: the body, or `error <code>` (7 refused, 28 timeout). */
  fetch(ns: string, url: string, timeoutS = 3): string {
    try {
      return execFileSync('ip', ['netns', 'exec', ns, 'curl', '-s', '-m', String(timeoutS), url], {
        encoding: 'utf8',
      }).trim();
    } catch (err) {
      return `error ${String((err as { status?: number }).status)}`;
    }
  }

  /** `nft` run inside the node namespace (the proxy's command prefix). */
  nftCommand(): string[] {
    return ['ip', 'netns', 'exec', this.ns, 'nft'];
  }

  /** The node namespace's ruleset as text. */
  ruleset(): string {
    return execFileSync('ip', ['netns', 'exec', this.ns, 'nft', 'list', 'ruleset'], { encoding: 'utf8' });
  }

  /** Kills the servers and deletes every namespace this host made. */
  destroy(): void {
    for (const s of this.#servers) s.kill('SIGKILL');
    for (const ns of this.#namespaces.reverse()) {
      try {
        execFileSync('ip', ['netns', 'del', ns]);
      } catch {
        // already gone
      }
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/**
 * Links two network namespaces with a veth pair: `devA` in `nsA` with `cidrA`, `devB` in `nsB`
 * with `cidrB` (addresses with their prefix), both up. The pair goes with either namespace.
 */
export function linkNamespaces(
  nsA: string,
  devA: string,
  cidrA: string,
  nsB: string,
  devB: string,
  cidrB: string,
): void {
  execFileSync('ip', ['link', 'add', devA, 'netns', nsA, 'type', 'veth', 'peer', 'name', devB, 'netns', nsB]);
  execFileSync('ip', ['-n', nsA, 'addr', 'add', cidrA, 'dev', devA]);
  execFileSync('ip', ['-n', nsB, 'addr', 'add', cidrB, 'dev', devB]);
  execFileSync('ip', ['-n', nsA, 'link', 'set', devA, 'up']);
  execFileSync('ip', ['-n', nsB, 'link', 'set', devB, 'up']);
}
