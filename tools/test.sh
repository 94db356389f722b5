#!/usr/bin/env bash
# Runs every test on a fresh machine: installs what the tests need (npm packages, Debian's
# etcd-server for the etcd backend), type-checks, lints, checks formatting, builds, checks the
# folder import graph, then runs the vitest suites, and fails when they left mounts, processes,
# network namespaces, bridges or nftables tables behind.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: etcd-server for the etcd backend, protobuf-compiler (protoc) as the independent
# decoder of the protobuf golden tests, python3-prometheus-client as the independent /metrics parser;
# for the node side: containerd, runc, the CNI plugins and busybox-static (real containers and the
# images built from fixtures), nftables, iproute2 and curl (the proxy and NetworkPolicy tests in
# network namespaces).
missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v curl >/dev/null 2>&1 || missing+=(curl)
# The official Python client's parser reads /metrics in the metrics tests.
/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1 || missing+=(python3-prometheus-client)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "missing ${missing[*]} and cannot install here: those tests will fail" >&2
  fi
fi
# The etcd suites must run (not skip) when this script runs them.
export CAPSTAN_REQUIRE_ETCD=1

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent typecheck
npm run --silent lint
npm run --silent format:check
npm run --silent build
# The stamp tools/run.sh checks, so the cluster test runs this build instead of building again.
touch dist/.build-stamp
# No import cycle between the folders of src/ and storage/, and the layering kept.
node dist/tools/check-imports.js

# What the tests may leave on this machine if a teardown fails: mounts under the temp dir,
# containerd, shims and envtest stand-ins, network namespaces, bridges and nftables tables.
# Taken before and after the run, so only what the run added is reported, and that fails it.
machine_state() {
  {
    grep -o ' /tmp/capstan-[^ ]*' /proc/mounts | sed 's/^ /mount /' || true
    pgrep -af 'etcd-standin|/tmp/capstan-|containerd-shim' | grep -v pgrep | sed 's/^/process /' || true
    ip netns list 2>/dev/null | awk '{print "netns " $1}' || true
    ip -o link show type bridge 2>/dev/null | awk -F': ' '{print "bridge " $2}' || true
    nft list tables 2>/dev/null | sed 's/^/nft /' || true
  } | sort
}
before=$(machine_state)
rc=0
npx vitest run "$@" || rc=$?
added=$(comm -13 <(echo "$before") <(machine_state))
if [ -n "$added" ]; then
  echo "the tests left these behind (a teardown failed):" >&2
  echo "$added" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
