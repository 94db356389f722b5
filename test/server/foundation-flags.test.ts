/**
 * `capstan server` flags: pflag syntax, Go durations, kube-apiserver's defaults, validation, help,
 * and the command's exit statuses.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, DurationError } from '../../src/flags/duration.js';
import { FlagError, FlagSet } from '../../src/flags/flags.js';
import { SERVER_FLAGS } from '../../src/server/flag-table.js';
import {
  notImplementedWarnings,
  parseServerArgs,
  serverHelp,
  type ServerOptions,
} from '../../src/server/options.js';
import { runServerCommand } from '../../src/server/run.js';

function options(argv: readonly string[]): ServerOptions {
  const parsed = parseServerArgs(argv, '/work/dir');
  if (parsed.help) throw new Error('unexpected --help');
  return parsed.options;
}

describe('Go durations', () => {
  it('parses what time.ParseDuration accepts', () => {
    expect(parseDuration('5m0s')).toBe(300_000);
    expect(parseDuration('1h0m0s')).toBe(3_600_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('2h45m')).toBe(9_900_000);
    expect(parseDuration('300ms')).toBe(300);
    expect(parseDuration('1us')).toBeCloseTo(0.001);
    expect(parseDuration('1µs')).toBeCloseTo(0.001);
    expect(parseDuration('-1s')).toBe(-1000);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('.5s')).toBe(500);
  });

  it('rejects what time.ParseDuration rejects, with its messages', () => {
    expect(() => parseDuration('')).toThrow(DurationError);
    expect(() => parseDuration('5')).toThrow('time: missing unit in duration "5"');
    expect(() => parseDuration('5x')).toThrow('time: unknown unit "x" in duration "5x"');
    expect(() => parseDuration('s')).toThrow('time: invalid duration "s"');
    expect(() => parseDuration('1h-5m')).toThrow(DurationError);
  });

  it('formats like Duration.String', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(300_000)).toBe('5m0s');
    expect(formatDuration(3_600_000)).toBe('1h0m0s');
    expect(formatDuration(120_000)).toBe('2m0s');
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(1_500)).toBe('1.5s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(0.0015)).toBe('1.5µs');
    expect(formatDuration(-90_000)).toBe('-1m30s');
  });
});

describe('FlagSet (pflag syntax)', () => {
  const set = new FlagSet('t', [
    { section: 'x', name: 'port', type: 'int', default: 1, usage: '' },
    { section: 'x', name: 'on', type: 'bool', default: false, usage: '' },
    { section: 'x', name: 'list', type: 'stringSlice', default: ['a'], usage: '' },
    { section: 'x', name: 'arr', type: 'stringArray', default: [], usage: '' },
    { section: 'x', name: 'map', type: 'mapStringString', default: {}, usage: '' },
    { section: 'x', name: 'gates', type: 'mapStringBool', default: {}, usage: '' },
    { section: 'x', name: 'wait', type: 'duration', default: 1000, usage: '' },
    { section: 'x', name: 'v', shorthand: 'v', type: 'int', default: 0, usage: '' },
  ]);

  it('takes --flag=value, --flag value, bare bools, shorthands and normalizes _', () => {
    const p = set.parse([
      '--port=8',
      '--on',
      '--wait',
      '2m',
      '-v',
      '3',
      '--list=b,c',
      '--list',
      'd',
      '--arr=x,y',
      '--arr=z',
    ]);
    expect(p.values.get('port')).toBe(8);
    expect(p.values.get('on')).toBe(true);
    expect(p.values.get('wait')).toBe(120_000);
    expect(p.values.get('v')).toBe(3);
    expect(p.values.get('list')).toEqual(['b', 'c', 'd']); // the first use replaces the default
    expect(p.values.get('arr')).toEqual(['x,y', 'z']);
    expect([...p.changed].sort()).toEqual(['arr', 'list', 'on', 'port', 'v', 'wait']);
    expect(set.parse(['--on=false']).values.get('on')).toBe(false);
    expect(set.parse(['--port=0x10']).values.get('port')).toBe(16);
    expect(set.parse(['--wait=0']).values.get('wait')).toBe(0);
    expect(set.parse(['-v=2']).values.get('v')).toBe(2);
    expect(set.parse(['--map=a=1,b', '--map', 'c=3']).values.get('map')).toEqual({ a: '1', b: '', c: '3' });
    expect(set.parse(['--gates=A=true,B=false']).values.get('gates')).toEqual({ A: 'true', B: 'false' });
  });

  it('keeps a separate word after a bool as a positional argument, and stops at --', () => {
    expect(set.parse(['--on', 'false']).args).toEqual(['false']);
    expect(set.parse(['--', '--port=3']).args).toEqual(['--port=3']);
  });

  it('reports mistakes with pflag wording', () => {
    expect(() => set.parse(['--nope'])).toThrow(new FlagError('unknown flag: --nope'));
    expect(() => set.parse(['-x'])).toThrow("unknown shorthand flag: 'x' in -x");
    expect(() => set.parse(['--port'])).toThrow('flag needs an argument: --port');
    expect(() => set.parse(['--port=abc'])).toThrow(
      'invalid argument "abc" for "--port" flag: strconv.ParseInt: parsing "abc": invalid syntax',
    );
    expect(() => set.parse(['--on=maybe'])).toThrow('invalid argument "maybe" for "--on" flag');
    expect(() => set.parse(['--wait=5x'])).toThrow(
      'invalid argument "5x" for "--wait" flag: time: unknown unit "x" in duration "5x"',
    );
    expect(() => set.parse(['--gates=A=yes'])).toThrow(FlagError);
  });

  it('recognizes --help and -h', () => {
    expect(set.parse(['--help']).help).toBe(true);
    expect(set.parse(['-h']).help).toBe(true);
  });
});

describe('capstan server options', () => {
  it("has kube-apiserver's defaults", () => {
    const o = options([]);
    expect(o).toMatchObject({
      securePort: 6443,
      bindAddress: '0.0.0.0',
      advertiseAddress: '',
      certDir: '/var/run/capstan',
      etcdServers: [],
      etcdPrefix: '/registry',
      etcdCompactionIntervalMs: 300_000,
      storageBackend: 'etcd3',
      eventTtlMs: 3_600_000,
      requestTimeoutMs: 60_000,
      minRequestTimeoutSeconds: 1800,
      maxRequestsInflight: 400,
      maxMutatingRequestsInflight: 200,
      watchCache: true,
      defaultWatchCacheSize: 100,
      runtimeConfig: {},
      authorizationModes: ['AlwaysAllow'],
      anonymousAuth: true,
      dataDir: '/work/dir/.capstan',
    });
    expect(o.changed.size).toBe(0);
  });

  it('reads every implemented flag', () => {
    const o = options([
      '--secure-port',
      '8443',
      '--bind-address=127.0.0.1',
      '--advertise-address=10.0.0.5',
      '--cert-dir=certs',
      '--etcd-servers=http://a:2379,http://b:2379',
      '--etcd-prefix=/custom/',
      '--etcd-compaction-interval=0',
      '--event-ttl=30m',
      '--runtime-config=batch/v1=false,apps/v1',
      '--anonymous-auth=false',
      '--authorization-mode=RBAC,Node',
      '--tls-min-version=VersionTLS13',
      '--data-dir',
      '/var/lib/capstan',
    ]);
    expect(o).toMatchObject({
      securePort: 8443,
      bindAddress: '127.0.0.1',
      advertiseAddress: '10.0.0.5',
      certDir: '/work/dir/certs',
      etcdServers: ['http://a:2379', 'http://b:2379'],
      etcdPrefix: '/custom',
      etcdCompactionIntervalMs: 0,
      eventTtlMs: 1_800_000,
      runtimeConfig: { 'batch/v1': 'false', 'apps/v1': '' },
      anonymousAuth: false,
      authorizationModes: ['RBAC', 'Node'],
      tlsMinVersion: 'TLSv1.3',
      dataDir: '/var/lib/capstan',
    });
    // --runtime-config is implemented (test/server/runtime-config.test.ts).
    expect(notImplementedWarnings(o).join('\n')).not.toMatch(/runtime-config/);
    expect(o.apiEnablement.serves('batch', 'v1', 'jobs')).toBe(false);
    // Every authorization mode is implemented now: no warning about them.
    expect(notImplementedWarnings(o).join('\n')).not.toMatch(/authorization mode/);
  });

  it('accepts the flags later versions implement, and stores them', () => {
    const o = options([
      '--token-auth-file=/t.csv',
      '--service-account-key-file=/a',
      '--service-account-key-file=/b',
      '--feature-gates=Foo=true',
      '-v',
      '4',
    ]);
    expect(o.flags.get('token-auth-file')).toBe('/t.csv');
    expect(o.flags.get('service-account-key-file')).toEqual(['/a', '/b']);
    expect(o.flags.get('feature-gates')).toEqual({ Foo: 'true' });
    expect(o.flags.get('v')).toBe(4);
  });

  it('rejects bad values and positional arguments', () => {
    expect(() => options(['--secure-port=70000'])).toThrow(FlagError);
    expect(() => options(['--bind-address=localhost'])).toThrow('must be a valid IP address');
    expect(() => options(['--storage-backend=etcd2'])).toThrow('supported backends are "etcd3" and "memory"');
    expect(() => options(['--storage-backend=memory', '--etcd-servers=http://127.0.0.1:2379'])).toThrow(
      'cannot be used together',
    );
    expect(() => options(['--authorization-mode=Sometimes'])).toThrow(
      'unknown authorization mode "Sometimes"',
    );
    expect(() => options(['--tls-cert-file=a.crt'])).toThrow('must be given together');
    expect(() => options(['--tls-min-version=TLS1'])).toThrow(FlagError);
    expect(() => options(['extra'])).toThrow('does not take any arguments');
    expect(() => options(['--anonymous-auth', 'false'])).toThrow('does not take any arguments');
  });

  it('documents every flag in --help, marking those not implemented yet', () => {
    const help = serverHelp();
    /** The help entry of one flag, whitespace collapsed. */
    const entry = (name: string): string => {
      const start = help.search(new RegExp(`--${name}[ \\n]`));
      const next = help.indexOf('\n      --', start + 1);
      return help.slice(start, next === -1 ? undefined : next).replace(/\s+/g, ' ');
    };
    for (const spec of SERVER_FLAGS) expect(help).toContain(`--${spec.name}`);
    expect(entry('etcd-compaction-interval')).toMatch(
      /^--etcd-compaction-interval duration The interval .*\(default 5m0s\)$/,
    );
    expect(entry('event-ttl')).toMatch(/storage lease .*\(default 1h0m0s\)$/);
    expect(entry('allow-privileged')).toMatch(/\[accepted, not implemented yet\]$/);
    // The README names every flag that is accepted and changes nothing, and no other.
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const listed = /These are parsed and checked but change nothing: ([^.]*)\./.exec(readme)?.[1] ?? '';
    const named = [...listed.matchAll(/`(-{1,2}[a-z-]+)`/g)].map((m) => (m[1] as string).replace(/^-+/, ''));
    expect(named.sort()).toEqual(
      SERVER_FLAGS.filter((f) => f.notImplemented === true)
        .map((f) => f.name)
        .sort(),
    );
    expect(entry('secure-port')).toMatch(/^--secure-port int .*\(default 6443\)$/);
    expect(entry('anonymous-auth')).toMatch(/\(default true\)$/);
  });
});

describe('capstan server command', () => {
  function capture(): {
    out: string[];
    err: string[];
    io: { out: (l: string) => void; err: (l: string) => void };
  } {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (l) => out.push(l), err: (l) => err.push(l) } };
  }

  it('exits 2 with a clear message on an unknown flag', async () => {
    const c = capture();
    expect(await runServerCommand(['--no-such-flag'], c.io)).toBe(2);
    expect(c.err).toEqual(['Error: unknown flag: --no-such-flag', "Run 'capstan server --help' for usage."]);
  });

  it('prints help and exits 0', async () => {
    const c = capture();
    expect(await runServerCommand(['--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toMatch(/^usage: capstan server \[flags\]/);
  });

  it('exits 1 when the server cannot start', async () => {
    const c = capture();
    const dir = await mkdtemp(join(tmpdir(), 'capstan-flags-'));
    try {
      const code = await runServerCommand(
        [
          '--secure-port=0',
          '--tls-cert-file=/nonexistent/a.crt',
          '--tls-private-key-file=/nonexistent/a.key',
          `--data-dir=${dir}`,
          `--cert-dir=${dir}/pki`,
        ],
        c.io,
      );
      expect(code).toBe(1);
      expect(c.err.join('\n')).toMatch(/--tls-cert-file \/nonexistent\/a.crt: cannot read \(ENOENT\)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
