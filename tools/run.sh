#!/usr/bin/env bash
# Runs Capstan's main job on a fresh machine: installs the npm packages, builds, and starts
# `capstan server` on the embedded LevelDB store. Extra arguments go to `capstan server`.
#
# Everything the server writes stays under .capstan/ in the repository: the store
# (.capstan/store), the CA and certificates (.capstan/pki, unless --cert-dir is given), and the
# admin kubeconfig (.capstan/admin.kubeconfig), whose path the server prints on start. It listens
# on 127.0.0.1 only unless --bind-address is given.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build

defaults=()
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
exec node dist/src/cli/main.js server "${defaults[@]}" "$@"
