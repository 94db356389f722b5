#!/usr/bin/env bash
# Runs Capstan's main job on a fresh machine: installs the npm packages, builds, and starts
# `capstan cluster --authorization-mode=Node,RBAC` on the embedded LevelDB store: the API server
# with its controller manager and scheduler, and a node. Extra arguments go to `capstan cluster`
# (every `capstan server` flag, plus --simulated-nodes=N, --pod-cidr, --bridge and --reset; see
# `capstan cluster --help`).
#
# The node is REAL where containerd, runc and the CNI plugins are installed and this runs as root
# (apt-get install containerd runc containernetworking-plugins busybox-static): Capstan starts its
# own containerd under .capstan/containerd, imports the pause and busybox images
# (docker.io/capstan/busybox:1) and the tarballs of .capstan/images/, and runs pods there. Stopping
# leaves the pods running; the next start adopts them. `bash tools/run.sh --reset` removes
# everything the cluster created. Elsewhere (or with --simulated-nodes=N) the node is simulated, and
# the start-up lines say so.
#
# Everything the server writes stays under .capstan/ in the repository: the store
# (.capstan/store), the CA and certificates (.capstan/pki, unless --cert-dir is given), and the
# admin kubeconfig (.capstan/admin.kubeconfig), whose path the server prints on start. It listens
# on 127.0.0.1 only unless --bind-address is given (and, with a real node, on the pod bridge's
# gateway address, so that pods reach it through the `kubernetes` Service).
set -euo pipefail
cd "$(dirname "$0")/.."
# With CAPSTAN_STARTUP_TRACE=1, this script's phases go to stderr as the capstan process's do
# (`startup <phase> at <wall-clock ms>`; tools/measure-cluster-restart.ts --trace reads them).
trace() {
  if [ "${CAPSTAN_STARTUP_TRACE:-}" = 1 ]; then
    local us=${EPOCHREALTIME/[.,]/}
    echo "startup run.sh: $1 at ${us:0:-3}.${us: -3}" >&2
  fi
}
trace 'started'
# A node_modules that is a symbolic link is shared (a git worktree's): never reinstall it, since
# `npm ci` would empty the directory it points to.
if [ ! -e node_modules ] || { [ ! -L node_modules ] && [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  npm ci --no-audit --no-fund
fi
# Rebuild only when a source, the build settings or the packages changed since the last build,
# so a second start takes well under a second. The build ends with the bundle (dist/bundle/, see
# tools/bundle.ts), which starts in about a third of the time of tsc's output in dist/src/.
stamp=dist/.build-stamp
if [ ! -f "$stamp" ] || [ ! -f dist/bundle/capstan.js ] || [ -n "$(find src storage tools proto package.json package-lock.json tsconfig.json tsconfig.build.json -newer "$stamp" -print -quit)" ]; then
  npm run --silent build
  touch "$stamp"
fi
trace 'build checked'

# Secure default, as a kubeadm cluster: the Node and RBAC authorizers (the admin kubeconfig is in
# system:masters; anonymous requests reach only health, version and discovery).
defaults=()
case " $* " in
  *" --authorization-mode"*) ;;
  *) defaults+=(--authorization-mode=Node,RBAC) ;;
esac
case " $* " in
  *" --cert-dir"*) ;;
  *) defaults+=(--cert-dir=.capstan/pki) ;;
esac
# Secure by default: only this machine can connect unless --bind-address says otherwise (the
# flag's own default stays kube-apiserver's 0.0.0.0).
case " $* " in
  *" --bind-address"*) ;;
  *) defaults+=(--bind-address=127.0.0.1) ;;
esac
trace 'exec node'
exec node dist/bundle/capstan.js cluster "${defaults[@]}" "$@"
