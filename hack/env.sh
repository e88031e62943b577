# shellcheck shell=bash
# arbor's environment: tool versions, caches, PATH and an offline-safe Pulumi. Sourced by hack/*.sh;
# `eval "$(make -s env)"` puts the same into an interactive shell.
ARBOR_ROOT=${ARBOR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# shellcheck source=hack/versions.sh
source "$ARBOR_ROOT/hack/versions.sh"

# pin NAME: the version requirements.txt pins for a Python package; the engine is built to match it.
pin() { sed -n "s/^$1==\\([0-9][^ ;#]*\\).*/v\\1/p" "$ARBOR_ROOT/requirements.txt"; }
PULUMI_VERSION=$(pin pulumi)
PULUMI_KUBERNETES_PLUGIN_VERSION=$(pin pulumi-kubernetes)
PULUMI_COMMAND_PLUGIN_VERSION=$(pin pulumi-command)
# The cloud stacks' plugins, Pulumi's own releases, fetched by `make tools` when a registry is reachable.
PULUMI_AWS_PLUGIN_VERSION=$(pin pulumi-aws)
PULUMI_GCP_PLUGIN_VERSION=$(pin pulumi-gcp)
# The program's local provider reads these two (components/providers/local.py).
export KUBERNETES_VERSION

export ARBOR_CACHE=${ARBOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbor}
export ARBOR_TOOLS=$ARBOR_CACHE/tools
export ARBOR_BIN=$ARBOR_ROOT/.bin
export ARBOR_VENV=$ARBOR_ROOT/.venv
# Local clusters live with the clone, so two clones never share a cluster name or a process.
export KWOK_WORKDIR=$ARBOR_ROOT/.kwok
export PATH=$ARBOR_BIN:$ARBOR_VENV/bin:$PATH

# Pulumi stays offline: no update check, a file backend inside the (git-ignored) clone.
export PULUMI_HOME=$ARBOR_CACHE/pulumi
export PULUMI_SKIP_UPDATE_CHECK=true
# The stack the Makefile works on (its STACK). The local stack runs on the plugins tools.sh builds, so the
# engine never downloads one for it; a cloud stack may fetch the aws or gcp plugin its program asks for.
export ARBOR_STACK=${ARBOR_STACK:-local}
# A local landscape's seed stacks (local.<seed>, docs/shards.md) run on the same plugins.
if [ "$ARBOR_STACK" = local ] || [[ "$ARBOR_STACK" == local.* ]]; then
  export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
else
  export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=false
fi
export PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK=true
# The file backend rewrites the whole checkpoint after every step; `metadata=skip` spares each write a sidecar file
# holding the checkpoint's MD5, an eighth of the engine's CPU at 20 shoots (bench/README.md). Scripts that need the
# directory strip the query.
export PULUMI_BACKEND_URL=${PULUMI_BACKEND_URL:-file://$ARBOR_ROOT/.state?metadata=skip}
# The local stack's secrets are throwaway; this default is for the local stack only. Cloud stacks set
# their own PULUMI_CONFIG_PASSPHRASE (or a KMS secrets provider) and never use it.
export PULUMI_CONFIG_PASSPHRASE=${PULUMI_CONFIG_PASSPHRASE-arbor-local}
