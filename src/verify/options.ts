/**
 * Flags of `capstan verify` (pflag syntax, as the other subcommands) and the parsed options.
 */
import { FlagError, FlagSet, flagsOfSection, type FlagSpec } from '../flags/flags.js';
import { DEFAULT_TOLERANCES, type Tolerances } from './context.js';
import { GROUPS, type Group } from './ops.js';

const flag = flagsOfSection('Verify');

const FLAGS: readonly FlagSpec[] = [
  flag(
    'kubeconfig',
    'string',
    '',
    'Kubeconfig of the server to check (client certificates, bearer tokens, CA data).',
  ),
  flag('context', 'string', '', 'Kubeconfig context (default: its current-context).'),
  flag(
    'in-process',
    'string',
    '',
    'Check a Capstan started in this process instead: memory, leveldb (a temporary data dir), or an etcd URL such as http://127.0.0.1:2379.',
  ),
  flag('runs', 'int', 100, 'Random operation sequences to run.'),
  flag('seed', 'int', -1, 'fast-check seed (default random; printed with every run).'),
  flag('path', 'string', '', 'fast-check path of a counterexample to replay (with --seed).'),
  flag('time-limit', 'duration', 0, 'Stop generating new runs after this long (0: no limit).'),
  flag(
    'only',
    'stringSlice',
    [],
    `Operation groups to generate: ${GROUPS.join(', ')} (default: all; writes always run).`,
  ),
  flag('max-steps', 'int', 20, 'Longest operation sequence of one run.'),
  flag('old-watch', 'string', 'either', 'A watch from a very old version: replay, gone (410) or either.'),
  flag(
    'any-limit',
    'string',
    'either',
    'A resourceVersion=0 list with limit: honor, ignore (the whole list) or either.',
  ),
  flag(
    'send-initial-events',
    'string',
    'optional',
    'sendInitialEvents watches: required, or optional (a 4xx refusal is tolerated).',
  ),
  flag(
    'stale-cache',
    'string',
    'allow',
    'allow: a Not-older-than list or watch at a revision the server returned may get 504 Too large resource version (a kube-apiserver watch cache on etcd without progress notifications); forbid.',
  ),
  flag(
    'name-selector-get',
    'string',
    'allow',
    'allow: a list with fieldSelector=metadata.name=N may be served as a get (Not-older-than instead of Exact, as kube-apiserver does); forbid.',
  ),
  flag(
    'unset-watch',
    'string',
    'any',
    "Where a watch without resourceVersion may start: consistent (at or after the last write) or any (kube-apiserver 1.33 starts it at its watch cache's possibly lagging state).",
  ),
  flag('watch-timeout', 'duration', 10_000, 'How long a watch may take to deliver the last write of a run.'),
  flag('json', 'string', '', 'Write the JSON report to this file.'),
  flag('progress', 'bool', true, 'Show progress on stderr.'),
];

/** Parsed options. */
export interface VerifyOptions {
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly inProcess: string | undefined;
  readonly runs: number;
  readonly seed: number | undefined;
  readonly path: string | undefined;
  readonly timeLimitMs: number | undefined;
  readonly groups: ReadonlySet<Group>;
  readonly maxSteps: number;
  readonly tolerances: Tolerances;
  readonly json: string | undefined;
  readonly progress: boolean;
}

/** `capstan verify --help`. */
export function verifyHelp(): string {
  return `usage: capstan verify (--kubeconfig FILE | --in-process memory|leveldb|ETCD-URL) [flags]

Model-based check of a Kubernetes-compatible API server's resourceVersion, paging and watch
semantics: random sequences of ConfigMap writes, lists and watches in throwaway namespaces,
checked against one reference model; a failure is shrunk and printed as a replayable script.
See docs/verify.md.

${new FlagSet('capstan verify', FLAGS).usage()}`;
}

function oneOf<T extends string>(v: string, allowed: readonly T[], name: string): T {
  if (!(allowed as readonly string[]).includes(v))
    throw new FlagError(`invalid argument "${v}" for "--${name}": want ${allowed.join(', ')}`);
  return v as T;
}

/**
 * Parses `capstan verify` arguments.
 * @returns undefined for `--help`.
 * @throws FlagError for unknown flags, bad values, or neither/both of --kubeconfig and --in-process.
 */
export function parseVerifyArgs(argv: readonly string[]): VerifyOptions | undefined {
  const parsed = new FlagSet('capstan verify', FLAGS).parse(argv);
  if (parsed.help) return undefined;
  if (parsed.args.length > 0)
    throw new FlagError(`"capstan verify" takes no arguments, got ${parsed.args.join(' ')}`);
  const v = parsed.values;
  const str = (n: string): string => v.get(n) as string;
  const int = (n: string): number => v.get(n) as number;
  const opt = (n: string): string | undefined => (str(n) === '' ? undefined : str(n));
  const kubeconfig = opt('kubeconfig');
  const inProcess = opt('in-process');
  if ((kubeconfig === undefined) === (inProcess === undefined))
    throw new FlagError('exactly one of --kubeconfig and --in-process is required');
  if (
    inProcess !== undefined &&
    !['memory', 'leveldb'].includes(inProcess) &&
    !/^https?:\/\//.test(inProcess)
  )
    throw new FlagError(
      `invalid argument "${inProcess}" for "--in-process": want memory, leveldb or an etcd URL`,
    );
  const groups = new Set<Group>();
  for (const g of v.get('only') as readonly string[]) groups.add(oneOf(g, GROUPS, 'only'));
  if (int('runs') < 1) throw new FlagError('--runs must be at least 1');
  if (int('max-steps') < 1) throw new FlagError('--max-steps must be at least 1');
  const seed = int('seed');
  const path = opt('path');
  if (path !== undefined && seed < 0) throw new FlagError('--path needs the --seed it was printed with');
  return {
    kubeconfig,
    context: opt('context'),
    inProcess,
    runs: int('runs'),
    seed: seed < 0 ? undefined : seed,
    path,
    timeLimitMs: int('time-limit') > 0 ? int('time-limit') : undefined,
    groups: groups.size === 0 ? new Set(GROUPS) : groups,
    maxSteps: int('max-steps'),
    tolerances: {
      ...DEFAULT_TOLERANCES,
      oldWatch: oneOf(str('old-watch'), ['either', 'replay', 'gone'] as const, 'old-watch'),
      anyLimit: oneOf(str('any-limit'), ['either', 'honor', 'ignore'] as const, 'any-limit'),
      initialEvents: oneOf(
        str('send-initial-events'),
        ['optional', 'required'] as const,
        'send-initial-events',
      ),
      staleCache: oneOf(str('stale-cache'), ['allow', 'forbid'] as const, 'stale-cache'),
      nameSelectorGet: oneOf(str('name-selector-get'), ['allow', 'forbid'] as const, 'name-selector-get'),
      unsetWatch: oneOf(str('unset-watch'), ['any', 'consistent'] as const, 'unset-watch'),
      watchTimeoutMs: Math.max(100, int('watch-timeout')),
    },
    json: opt('json'),
    progress: v.get('progress') === true,
  };
}
