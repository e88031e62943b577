#!/usr/bin/env bash
# Measures arbor's set-up times, the figures the README quotes:
#   cold: hack/tools.sh with empty Go module and build caches and an empty tool cache (everything built);
#   create: `make up` of the local stack from nothing, tools cached (clusters and objects created);
#   warm: `make up` of the local stack with tools cached and the stack already converged (a no-op up).
# Usage: bench/setup_times.sh [cold|create|warm]...   (default: warm). Prints one line per measurement.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

cold() {
  local scratch
  scratch=$(mktemp -d /tmp/arbor-cold.XXXXXX)
  # A fresh clone of HEAD with empty Go module, Go build and tool caches: what a new machine pays.
  git clone -q "$ROOT" "$scratch/arbor"
  local start=$SECONDS
  (cd "$scratch/arbor" && GOMODCACHE=$scratch/gomod GOCACHE=$scratch/gocache XDG_CACHE_HOME=$scratch/xdg \
    ARBOR_FORCE_BUILD=1 hack/tools.sh) | sed 's/^/  /'
  printf 'cold tools build: %ds (Go modules: %s, build cache: %s)\n' "$((SECONDS - start))" \
    "$(du -sh "$scratch/gomod" | cut -f1)" "$(du -sh "$scratch/gocache" | cut -f1)"
  chmod -R u+w "$scratch" && rm -rf "$scratch"
}

create() {
  make -s down >/dev/null
  local start=$SECONDS
  make -s up >/dev/null
  printf 'make up from nothing (tools cached): %ds\n' "$((SECONDS - start))"
}

warm() {
  make -s up >/dev/null
  local start=$SECONDS
  make -s up >/dev/null
  printf 'warm make up: %ds\n' "$((SECONDS - start))"
}

for what in "${@:-warm}"; do "$what"; done
