#!/usr/bin/env bash
# Converges a landscape as `make up` does: its stack, then (stacks: perSeed, docs/shards.md) its seed stacks, those
# in parallel (ARBOR_STACK_JOBS at once, default 2). First, for each stack: what a killed run left is cleared
# (recover.py), objects kept by an older arbor's resources are handed over (state_moves.py), each seed's state is
# moved into its own stack (shards.py split), a shoot the document moved to another seed is handed over to that
# seed's stack, whose update migrates its control plane (shards.py migrate), and confirmed deletions are
# unprotected (deletions.py).
# Usage: hack/up.sh <landscape stack>   (in the environment of hack/env.sh)
set -euo pipefail
landscape=$1
# shellcheck source=hack/env.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
py() { "$ARBOR_VENV/bin/python" "$ARBOR_ROOT/hack/$1" "${@:2}"; }
py recover.py "$landscape"
py state_moves.py "$landscape"
py shards.py split "$landscape"
mapfile -t stacks < <(py shards.py stacks "$landscape")
for stack in "${stacks[@]:1}"; do
  py recover.py "$stack"
  py state_moves.py "$stack"
done
py shards.py migrate "$landscape"
for stack in "${stacks[@]}"; do py deletions.py "$stack"; done
up() { pulumi up --stack "$1" --yes --refresh --skip-preview --suppress-progress; }
up "$landscape"
if [ ${#stacks[@]} -gt 1 ]; then
  # Each seed stack's output is printed whole when it ends, so two never interleave; any failure fails the whole.
  export -f up
  printf '%s\n' "${stacks[@]:1}" | xargs -P "${ARBOR_STACK_JOBS:-2}" -I{} bash -c \
    'out=$(up "$1" 2>&1); rc=$?; printf "\n== seed stack %s ==\n%s\n" "$1" "$out"; exit $rc' _ {}
fi
for stack in "${stacks[@]}"; do py summary.py "$stack"; done
