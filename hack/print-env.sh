#!/usr/bin/env bash
# Prints arbor's environment as shell exports: eval "$(make -s env)" puts the tools on PATH and points
# pulumi, kubectl and kwokctl at this clone's local stack.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
for var in PATH ARBOR_CACHE ARBOR_STACK KWOK_WORKDIR KUBERNETES_VERSION PULUMI_HOME PULUMI_SKIP_UPDATE_CHECK \
  PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION PULUMI_BACKEND_URL PULUMI_CONFIG_PASSPHRASE; do
  printf 'export %s=%q\n' "$var" "${!var}"
done
