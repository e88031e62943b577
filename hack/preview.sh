#!/usr/bin/env bash
# `make preview`: each stack of the landscape previewed with the policy pack, the garden stack first, then its seed
# stacks (docs/shards.md). <out>/preview.md is their summaries one after the other (a section per stack), each
# stack's digest <out>/preview[-<stack>].json. Confirmed deletions are previewed past their protection; any other
# protected delete fails (hack/deletions.py). A landscape whose seeds' state `make up` has yet to move is refused:
# the garden stack's preview would show their resources deleted.
# Usage: hack/preview.sh <landscape stack> <out dir> [policy pack] [policy pack config]
set -euo pipefail
landscape=$1 out=$2 pack=${3:-} pack_config=${4:-}
# shellcheck source=hack/env.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
py() { "$ARBOR_VENV/bin/python" "$ARBOR_ROOT/hack/$1" "${@:2}"; }
waiting=$(py shards.py pending "$landscape")
if [ -n "$waiting" ]; then
  printf '%s\n' "$waiting" >&2
  exit 1
fi
mapfile -t stacks < <(py shards.py stacks "$landscape")
rc=0
: > "$out/preview.md"
for stack in "${stacks[@]}"; do
  suffix=$([ "$stack" = "$landscape" ] || echo "-$stack")
  flags=$(py deletions.py "$stack" --preview-flags)
  one=0
  # Streamed JSON: the only form that carries policy findings; the summary rebuilds the digest from it.
  # shellcheck disable=SC2086
  PULUMI_ENABLE_STREAMING_JSON_PREVIEW=true pulumi preview --stack "$stack" --json --refresh $flags \
    ${pack:+--policy-pack "$pack"} ${pack_config:+--policy-pack-config "$pack_config"} \
    > "$out/preview-events$suffix.json" || one=$?
  py preview_summary.py "$out/preview-events$suffix.json" "$stack" --digest "$out/preview$suffix.json" \
    >> "$out/preview.md"
  if [ "$one" -eq 0 ]; then py deletions.py "$stack" --verify "$out/preview$suffix.json" || one=$?; fi
  [ "$one" -eq 0 ] || rc=$one
done
cat "$out/preview.md"
exit "$rc"
