/**
 * Writes a directory usable as envtest's `KUBEBUILDER_ASSETS` (or `BinaryAssetsDirectory`):
 * a `kube-apiserver` shim running `capstan server`, an `etcd` stand-in, and a `kubectl` link.
 */
import { access, chmod, constants, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { serverHelp } from '../server/options.js';
import { ETCD_STANDIN_HELP, ETCD_STANDIN_JS, PARKED_FLAG, PARKED_PATH } from './etcd-standin.js';

/** The environment variable that makes both shims use envtest's real etcd. */
export const REAL_ETCD_ENV = 'CAPSTAN_ENVTEST_ETCD';

/**
 * The environment variable naming the in-process controllers the shim's server runs (its
 * `--controllers` value, e.g. `namespace` for namespace deletion). Unset or empty: none, as a
 * bare kube-apiserver. A `--controllers` flag among envtest's API server args is added to it.
 */
export const CONTROLLERS_ENV = 'CAPSTAN_ENVTEST_CONTROLLERS';

/** Where a kubectl is looked for when none is on PATH. */
const KUBECTL_FALLBACKS = ['/usr/lib/google-cloud-sdk/bin/kubectl.1.33'];

/** What {@link writeEnvtestAssets} needs to know. */
export interface EnvtestAssetsOptions {
  /** Absolute path of Capstan's CLI entry (`dist/src/cli/main.js`). */
  readonly mainJs: string;
  /** The node binary the shims run. Default: the current one. */
  readonly nodePath?: string;
  /** PATH searched for kubectl. Default: the current PATH. */
  readonly searchPath?: string;
}

/** What was written. */
export interface EnvtestAssets {
  readonly dir: string;
  readonly apiserver: string;
  readonly etcd: string;
  /** The kubectl the link points to, or undefined when none was found. */
  readonly kubectl: string | undefined;
}

/** Single-quotes a string for sh. */
function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

function apiserverScript(node: string, mainJs: string, helpFile: string): string {
  return `#!/usr/bin/env bash
# Written by \`capstan envtest-assets\`: Capstan as envtest's kube-apiserver.
# envtest's flags pass through unchanged, except --etcd-servers: by default it is dropped and Capstan
# keeps its objects in memory (--storage-backend=memory: envtest's etcd data never outlives a run
# either) as JSON (--storage-media-type=application/json: no protobuf transcoding on every write and
# watch event; nothing outside the process reads that store), with a fresh temporary data directory
# for its own files, removed on exit. With ${REAL_ETCD_ENV}=1
# Capstan uses the etcd envtest started (the \`etcd\` script then runs a real etcd).
# envtest runs \`kube-apiserver --help\` before every start: that is answered from the text
# \`capstan server --help\` printed when this directory was written, without starting node.
# Like a bare kube-apiserver, the server runs no controllers (no default ServiceAccounts, no
# kube-root-ca.crt, no namespace deletion) unless ${CONTROLLERS_ENV} or a --controllers flag
# names some (\`capstan server --help\` lists them).
# The etcd stand-in (envtest starts it first) keeps a server process parked, its code already
# loaded: this script hands it the arguments over the stand-in's port and relays its output and
# exit status (see etcd-standin.mjs). When there is none, it starts the server itself.
CONTROLLERS="--controllers=\${${CONTROLLERS_ENV}:-}"
NODE=${shQuote(node)}
MAIN=${shQuote(mainJs)}
if [ "$#" = 1 ] && { [ "$1" = --help ] || [ "$1" = -h ]; }; then
  exec cat ${shQuote(helpFile)}
fi
if [ "\${${REAL_ETCD_ENV}:-}" = "1" ]; then
  exec "$NODE" "$MAIN" server "$CONTROLLERS" "$@"
fi
etcd=
n=$#
skip=0
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  if [ "$skip" = 1 ]; then skip=0; etcd=$a; continue; fi
  case $a in
    --etcd-servers=*) etcd=\${a#--etcd-servers=} ;;
    --etcd-servers) skip=1 ;;
    *) set -- "$@" "$a" ;;
  esac
done
data=$(mktemp -d "\${TMPDIR:-/tmp}/capstan-envtest.XXXXXX") || exit 1
set -- --data-dir="$data" --storage-backend=memory --storage-media-type=application/json "$CONTROLLERS" "$@"

# Runs the server the stand-in at $etcd parked, and exits with its status; returns when none is
# parked there.
parked() {
  local LC_ALL=C first=\${etcd%%,*} hostport body a line pid code=
  case $first in http://*:*) ;; *) return 1 ;; esac
  hostport=\${first#http://}
  hostport=\${hostport%%/*}
  for a in "$@"; do
    case $a in *$'\\n'*) return 1 ;; esac
    body+="$a"$'\\n'
  done
  { exec 3<>"/dev/tcp/\${hostport%:*}/\${hostport##*:}"; } 2>/dev/null || return 1
  printf 'POST ${PARKED_PATH} HTTP/1.0\\r\\nContent-Length: %d\\r\\n\\r\\n%s' "\${#body}" "$body" >&3
  IFS= read -r line <&3
  case $line in
    'HTTP/1.'?' 200 '*) ;;
    *) exec 3<&-; return 1 ;;
  esac
  while IFS= read -r line <&3 && [ "$line" != $'\\r' ]; do :; done
  IFS= read -r line <&3
  pid=\${line#pid }
  echo "capstan envtest: running the server the etcd stand-in parked (pid $pid)" >&2
  trap 'kill -TERM "$pid" 2>/dev/null' TERM
  trap 'kill -INT "$pid" 2>/dev/null' INT
  while IFS= read -r line <&3; do
    case $line in
      '1 '*) printf '%s\\n' "\${line#1 }" ;;
      '2 '*) printf '%s\\n' "\${line#2 }" >&2 ;;
      'exit '*) code=\${line#exit } ;;
    esac
  done
  exec 3<&-
  if [ -z "$code" ]; then
    # The stand-in went away first: stop the server, which would otherwise outlive us.
    kill -TERM "$pid" 2>/dev/null
    code=1
  fi
  rm -rf "$data"
  exit "$code"
}
parked "$@"

"$NODE" "$MAIN" server "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
trap 'kill -INT "$pid" 2>/dev/null' INT
wait "$pid"
rc=$?
if kill -0 "$pid" 2>/dev/null; then
  wait "$pid"
  rc=$?
fi
rm -rf "$data"
exit "$rc"
`;
}

function etcdScript(node: string, standin: string, mainJs: string): string {
  return `#!/bin/sh
# Written by \`capstan envtest-assets\`: envtest starts etcd and polls its /health; Capstan's
# kube-apiserver shim keeps its objects in memory, so by default this only answers that probe, and
# parks a Capstan server process for the shim (etcd-standin.mjs).
# With ${REAL_ETCD_ENV}=1 it runs the first real etcd on PATH instead.
# envtest runs \`etcd --help\` before every start: the stand-in's answer needs no node process.
if [ "\${${REAL_ETCD_ENV}:-}" != "1" ]; then
  for a in "$@"; do
    case $a in
      --help | -h)
        printf '%s\\n' ${shQuote(ETCD_STANDIN_HELP)}
        exit 0
        ;;
    esac
  done
fi
if [ "\${${REAL_ETCD_ENV}:-}" = "1" ]; then
  self=$(cd "$(dirname "$0")" && pwd)/etcd
  IFS=:
  for d in $PATH; do
    if [ -x "$d/etcd" ] && [ "$(cd "$d" 2>/dev/null && pwd)/etcd" != "$self" ]; then
      exec "$d/etcd" "$@"
    fi
  done
  echo "${REAL_ETCD_ENV}=1 but no etcd on PATH" >&2
  exit 127
fi
exec ${shQuote(node)} ${shQuote(standin)} ${shQuote(`${PARKED_FLAG}=${mainJs}`)} "$@"
`;
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first kubectl on `searchPath`, else a known install, else undefined. */
export async function findKubectl(searchPath: string, skipDir: string): Promise<string | undefined> {
  for (const d of searchPath.split(delimiter)) {
    if (d === '' || resolve(d) === skipDir) continue;
    const candidate = join(d, 'kubectl');
    if (await executable(candidate)) return candidate;
  }
  for (const candidate of KUBECTL_FALLBACKS) if (await executable(candidate)) return candidate;
  return undefined;
}

/** Writes (or rewrites) the assets directory `dir`. */
export async function writeEnvtestAssets(dir: string, options: EnvtestAssetsOptions): Promise<EnvtestAssets> {
  const abs = resolve(dir);
  const node = options.nodePath ?? process.execPath;
  await mkdir(abs, { recursive: true });
  const apiserver = join(abs, 'kube-apiserver');
  const etcd = join(abs, 'etcd');
  const standin = join(abs, 'etcd-standin.mjs');
  const help = join(abs, 'kube-apiserver.help');
  // What `capstan server --help` prints (console.log adds the newline).
  await writeFile(help, `${serverHelp()}\n`);
  await writeFile(apiserver, apiserverScript(node, resolve(options.mainJs), help));
  await writeFile(standin, ETCD_STANDIN_JS);
  await writeFile(etcd, etcdScript(node, standin, resolve(options.mainJs)));
  await chmod(apiserver, 0o755);
  await chmod(etcd, 0o755);
  const kubectl = await findKubectl(options.searchPath ?? process.env['PATH'] ?? '', abs);
  const link = join(abs, 'kubectl');
  await rm(link, { force: true });
  if (kubectl !== undefined) await symlink(kubectl, link);
  return { dir: abs, apiserver, etcd, kubectl };
}
