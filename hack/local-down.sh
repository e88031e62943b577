#!/usr/bin/env bash
# Safety net after `pulumi destroy`: deletes every kwokctl cluster left in this clone's work directory, stops any
# process still running from it (kwokctl's, and the supervised ones under processes/: MCM, the object store) and
# removes the object stores' data, so `make down` leaves nothing behind even after a crash.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
clusters=$KWOK_WORKDIR/clusters
if [ -d "$clusters" ]; then
  for dir in "$clusters"/*/; do
    [ -d "$dir" ] || continue
    name=$(basename "$dir")
    echo "deleting leftover local cluster $name"
    kwokctl delete cluster --name "$name" --kubeconfig "$KWOK_WORKDIR/$name.kubeconfig" >/dev/null 2>&1 || true
  done
fi
# kwokctl runs each component from <workdir>/clusters/<name>/bin; anything still running from there is ours.
pids=$(pgrep -f "^$clusters/" || true)
if [ -n "$pids" ]; then
  echo "stopping $(wc -w <<<"$pids") leftover process(es)"
  kill $pids 2>/dev/null || true
  sleep 1
  kill -9 $(pgrep -f "^$clusters/" || true) 2>/dev/null || true
fi
rm -rf "$clusters"
# Supervised processes (machine-controller-manager per hosted shoot): each directory records "<pid> <executable>";
# a pid is only signalled while it still runs that executable (pids are reused).
for pidfile in "$KWOK_WORKDIR"/processes/*/pid; do
  [ -f "$pidfile" ] || continue
  read -r pid exe <"$pidfile" || continue
  if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ]; then
    echo "stopping leftover process $pid ($(basename "$(dirname "$pidfile")"))"
    kill "$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "/proc/$pid" ] || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
done
# The local object stores' objects (`pulumi destroy` removed its stack's already): no cluster is left to need them.
rm -rf "$KWOK_WORKDIR/object-store"
# Self-hosted shoots' machine directories (their credentials as files; `pulumi destroy` removed what it wrote).
rm -rf "$KWOK_WORKDIR/machines"
# What the engine's runs left in their temporary directories (kubeconfigs: hack/pulumi-run).
"$ARBOR_ROOT/hack/pulumi-run" --sweep
