#!/usr/bin/env bash
# `make preview`: each stack of the landscape previewed with the policy pack, the garden stack first, then its seed
# stacks (docs/shards.md). <out>/preview.md is the summary: for a sharded landscape, one table of every stack's
# changes with the landscape's totals, then each stack's changes per layer. Each stack's digest is
# <out>/preview[-<stack>].json. Confirmed deletions are previewed past their protection; any other protected
# delete fails (hack/deletions.py). Seeds whose state `make up` has yet to move into their stacks, and shoots it
# has yet to hand over to another seed's stack, are moved in a copy of the (file) backend first, so the preview
# shows the landscape as `make up` leaves it; the state is not touched.
# Usage: hack/preview.sh <landscape stack> <out dir> [policy pack] [policy pack config]
set -euo pipefail
landscape=$1 out=$2 pack=${3:-} pack_config=${4:-}
# shellcheck source=hack/env.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
py() { "$ARBOR_VENV/bin/python" "$ARBOR_ROOT/hack/$1" "${@:2}"; }

moves=""
pending=$(py shards.py pending "$landscape")
if [ -n "$pending" ]; then
  if [[ "$PULUMI_BACKEND_URL" != file://* ]]; then
    echo "$pending" >&2
    echo "preview: run \`make up\` first; a preview of moved state needs a file backend to copy" >&2
    exit 1
  fi
  copy=$(mktemp -d)
  # Only this landscape's seed stacks' files: other stacks' files may come and go meanwhile (tests run side by side).
  shopt -s nullglob
  before=("$ARBOR_ROOT/stacks/Pulumi.$landscape."*.yaml)
  shopt -u nullglob
  cleanup() {
    rm -rf "$copy"
    # The seed stacks' config files the move wrote for this preview only: `make up` writes them again.
    for f in "$ARBOR_ROOT/stacks/Pulumi.$landscape."*.yaml; do
      [[ " ${before[*]} " == *" $f "* ]] || rm -f "$f"
    done
  }
  trap cleanup EXIT
  mkdir -p "$copy/.pulumi"
  # The backend's directory, and its query (options such as metadata=skip), which the copy keeps.
  state=${PULUMI_BACKEND_URL#file://}
  query=${state#"${state%%[?]*}"}
  cp -r "${state%%[?]*}/.pulumi/"{meta.yaml,stacks} "$copy/.pulumi/"
  export PULUMI_BACKEND_URL="file://$copy$query"
  moves=$(py shards.py split "$landscape"; py shards.py migrate "$landscape")
fi
mapfile -t stacks < <(py shards.py stacks "$landscape")
rc=0
parts=()
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
    > "$out/preview$suffix.md"
  if [ "$one" -eq 0 ]; then py deletions.py "$stack" --verify "$out/preview$suffix.json" || one=$?; fi
  [ "$one" -eq 0 ] || rc=$one
  parts+=(--part "$stack=$out/preview-events$suffix.json")
done
if [ ${#stacks[@]} -gt 1 ]; then
  {
    py preview_summary.py - --landscape "$landscape" "${parts[@]}"
    if [ -n "$moves" ]; then
      printf '\n### state moved by `make up` first (nothing in a cluster changes)\n\n'
      while read -r line; do echo "- ${line#shards: }"; done <<< "$moves"
    fi
  } > "$out/preview.md.new"
  mv "$out/preview.md.new" "$out/preview.md"
fi
cat "$out/preview.md"
exit "$rc"
