#!/usr/bin/env bash
# Provides arbor's engine and local runtime: the pulumi CLI and Python language host, the kubernetes and
# command provider plugins, kube-apiserver, kube-controller-manager, kube-scheduler, etcd, etcdctl, etcdutl, kwok,
# kwokctl, machine-controller-manager and arbor's local provider sidecar for it, gardener-resource-manager, minio, the aws and gcp plugins (fetched when a plugin registry is reachable), and on request
# nodeagent-validate (gardener-node-agent's own config checks, for tests). A tool already on PATH at the right
# version is used as is; otherwise it is built from its Go module with the ordinary go client and cached under
# $ARBOR_CACHE/tools/<tool>-<version>/, so a fresh clone on the same machine builds nothing. Idempotent; prints one line per tool with its elapsed time.
#
# Usage: hack/tools.sh [tool ...]   (default: every tool but nodeagent-validate and kwok-driver-test)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/env.sh
source "$ROOT/hack/env.sh"

# The binaries are linked without debug information (-s -w), so the compiler need not write any: 6-9 % less
# compiling from an empty build cache (bench/README.md).
NO_DWARF=-gcflags=all=-dwarf=false
# Builds from a copy with its committed go.sum use READONLY_GOFLAGS: every module hash must already be there.
READONLY_GOFLAGS="-mod=readonly $NO_DWARF"
export GOFLAGS="-mod=mod $NO_DWARF" GOTOOLCHAIN=local GONOSUMDB=$ARBOR_UNLISTED_MODULES CGO_ENABLED=0
# A cold build is bound by compiling on every core; the compiler collecting garbage less often does 14 % less
# work for a few GB more memory (bench/README.md).
export GOGC=${GOGC:-400}
# hack/goproxy/ first: a module mirror of what the proxy does not serve (the command provider's release).
export GOPROXY="file://$ROOT/hack/goproxy,${GOPROXY:-$(go env GOPROXY)}"
WORK=$ARBOR_CACHE/build
mkdir -p "$ARBOR_TOOLS" "$ARBOR_BIN" "$WORK"

say() { printf '%-26s %-40s %s\n' "$1" "$2" "$3"; }
die() { echo "tools.sh: $*" >&2; exit 1; }

# mod_field MODULE@VERSION FIELD: one field of `go mod download -json` (Dir, GoMod, Version, Time, Hash).
mod_field() {
  local json
  json=$(go mod download -json "$1") || die "cannot download $1 from the Go module proxy"
  if [ "$2" = Hash ]; then
    sed -n 's/.*"Hash": "\([0-9a-f]*\)".*/\1/p' <<<"$json" | head -n1
  else
    sed -n "s/.*\"$2\": \"\\([^\"]*\\)\".*/\\1/p" <<<"$json" | head -n1
  fi
}

# checked MODULE@VERSION SUM: the module's directory, after checking its hash against the pinned one.
checked() {
  local sum
  sum=$(mod_field "$1" Sum)
  [ "$sum" = "$2" ] || die "$1 has hash '$sum', expected '$2' (hack/versions.sh)"
  mod_field "$1" Dir
}

# wrapper DIR MODULE-GO-MOD: a fresh wrapper module in DIR that copies the go, godebug and every
# non-filesystem replace directive of the upstream go.mod, so the build resolves as upstream's does.
wrapper() {
  local dir=$1 upstream=$2
  rm -rf "$dir" && mkdir -p "$dir"
  (
    cd "$dir"
    printf 'module arbor.local/tools/%s\n' "$(basename "$dir")" >go.mod
    # Committed hashes: Go refuses any module whose content differs from what was pinned.
    local sums=$ARBOR_ROOT/hack/gosum/$(basename "$dir").sum
    [ ! -f "$sums" ] || cp "$sums" go.sum
    local gover godebug
    gover=$(go mod edit -json "$upstream" | sed -n 's/^\t"Go": "\(.*\)",*$/\1/p')
    go mod edit -go="${gover:-1.24}"
    godebug=$(sed -n 's/^godebug \(.*\)$/\1/p' "$upstream")
    [ -z "$godebug" ] || go mod edit -godebug="$godebug"
    python3 "$ARBOR_ROOT/hack/gomod.py" module-replaces "$upstream" |
      xargs -r go mod edit
  )
}

# provide NAME VERSION VERSION-CHECK BUILD-FUNCTION BINARY...: use PATH, then the cache, else build.
# VERSION-CHECK is a shell snippet run with $1 set to a candidate binary; it prints the version it has.
provide() {
  local name=$1 version=$2 check=$3 build=$4
  shift 4
  # CACHE_SUFFIX names further pins that the binaries depend on, so a new pin never reuses a stale build.
  local dir=$ARBOR_TOOLS/$name-$version${CACHE_SUFFIX:-} start=$SECONDS b found
  # A tool on the user's PATH (not our own links in $ARBOR_BIN) at the right version, with all its binaries.
  local userpath=${PATH//$ARBOR_BIN:/}
  if [ -z "${ARBOR_FORCE_BUILD:-}" ] && found=$(PATH=$userpath command -v "$1") &&
    [ "$(bash -c "$check" _ "$found" 2>/dev/null)" = "$version" ]; then
    local all=1
    for b in "$@"; do PATH=$userpath command -v "$b" >/dev/null || all=""; done
    if [ -n "$all" ]; then
      for b in "$@"; do ln -sfn "$(PATH=$userpath command -v "$b")" "$ARBOR_BIN/$b"; done
      say "$name" "$version" "on PATH ($((SECONDS - start))s)"
      return
    fi
  fi
  local missing=""
  for b in "$@"; do [ -x "$dir/$b" ] || missing=1; done
  if [ -n "$missing" ]; then
    local tmp=$dir.partial log=$WORK/$name.log
    rm -rf "$tmp" && mkdir -p "$tmp"
    # A subshell outside any condition, so that `set -e` holds inside the build function.
    local rc=0
    set +e
    (set -e; "$build" "$tmp" "$version") >"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" != 0 ]; then
      tail -n 30 "$log" >&2
      die "building $name $version failed; full log: $log"
    fi
    rm -rf "$dir" && mv "$tmp" "$dir"
    say "$name" "$version" "built ($((SECONDS - start))s)"
  else
    say "$name" "$version" "cached ($((SECONDS - start))s)"
  fi
  # Provider plugins are not put on PATH: the engine would take them whatever their version.
  [ -n "${NO_LINK:-}" ] || for b in "$@"; do ln -sfn "$dir/$b" "$ARBOR_BIN/$b"; done
}

# --- Kubernetes control plane -------------------------------------------------------------------------

build_kubernetes() {
  local out=$1 v=$2 mod=$WORK/kubernetes
  local upstream commit date ldflags="-s -w" pkg
  upstream=$(mod_field "k8s.io/kubernetes@$v" GoMod)
  commit=$(mod_field "k8s.io/kubernetes@$v" Hash)
  date=$(mod_field "k8s.io/kubernetes@$v" Time)
  wrapper "$mod" "$upstream"
  cd "$mod"
  # k8s.io/kubernetes points every staging module at ./staging; pin each to its published release.
  python3 "$ARBOR_ROOT/hack/gomod.py" staging-replaces "$upstream" "$v" |
    xargs go mod edit
  go get "k8s.io/kubernetes@$v"
  # /version must report the real release: pulumi-kubernetes and kwokctl judge the server by it.
  local major=${v#v}; major=${major%%.*}
  local minor=${v#v*.}; minor=${minor%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitCommit=$commit -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  # One build of the four: their shared packages compile once and the links run side by side.
  go build -trimpath -ldflags "$ldflags" -o "$out/" k8s.io/kubernetes/cmd/{kube-apiserver,kube-controller-manager,kube-scheduler,kubectl}
}

# kubectl prints "Client Version: v1.34.4", the servers "Kubernetes v1.34.4".
kube_version() { "$1" version --client 2>/dev/null | sed -n 's/^Client Version: //p' || "$1" --version | awk '{print $2}'; }

# --- etcd ---------------------------------------------------------------------------------------------

build_etcd() {
  local out=$1 v=$2 mod=$WORK/etcd commit
  commit=$(mod_field "go.etcd.io/etcd/server/v3@$v" Hash)
  wrapper "$mod" "$(mod_field "go.etcd.io/etcd/server/v3@$v" GoMod)"
  cd "$mod"
  go get "go.etcd.io/etcd/server/v3@$v" "go.etcd.io/etcd/etcdctl/v3@$v" "go.etcd.io/etcd/etcdutl/v3@$v"
  local ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${commit:0:9}"
  go build -trimpath -ldflags "$ldflags" -o "$out/etcd" go.etcd.io/etcd/server/v3
  go build -trimpath -ldflags "$ldflags" -o "$out/etcdctl" go.etcd.io/etcd/etcdctl/v3
  # etcdutl restores a snapshot into a new data directory (etcdctl's restore went to it in etcd 3.6).
  go build -trimpath -ldflags "$ldflags" -o "$out/etcdutl" go.etcd.io/etcd/etcdutl/v3
}

etcd_version() { "$1" --version | sed -n 's/^etcd Version: \(.*\)$/v\1/p'; }

# --- kwok and kwokctl ---------------------------------------------------------------------------------

build_kwok() {
  local out=$1 v=$2
  GOBIN=$out go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${v#v}" \
    "sigs.k8s.io/kwok/cmd/kwok@$v" "sigs.k8s.io/kwok/cmd/kwokctl@$v"
}

kwok_version() { "$1" --version | sed -n 's/.*version \(v[0-9.]*\).*/\1/p' | head -n1; }

# --- nodeagent-validate -------------------------------------------------------------------------------

# The program lives in this repository with its own go.mod and committed go.sum (the gardener module
# version it checks against is the one its go.mod requires); it is built from a copy, so nothing is written
# into the clone, and rebuilt only when its sources (that version included) change.
NODEAGENT_VALIDATE_SRC=$ARBOR_ROOT/hack/nodeagent-validate

nodeagent_validate_gardener() {
  sed -n 's/^[[:space:]]*github.com\/gardener\/gardener \(v[^ ]*\)$/\1/p' "$NODEAGENT_VALIDATE_SRC/go.mod"
}

# sources DIR: a short hash of a Go program's go.mod, go.sum and sources, naming its cached build.
sources() { cat "$1"/go.mod "$1"/go.sum "$1"/*.go | sha256sum | cut -c1-12; }

build_nodeagent_validate() {
  local out=$1 mod=$WORK/nodeagent-validate
  rm -rf "$mod" && cp -r "$NODEAGENT_VALIDATE_SRC" "$mod"
  cd "$mod"
  # Read-only: the committed go.sum must already hold every module hash the build needs.
  GOFLAGS=$READONLY_GOFLAGS go build -trimpath -ldflags "-s -w" -o "$out/nodeagent-validate" .
}

nodeagent_validate_version() { "$1" -version; }

# --- machine-controller-manager ---------------------------------------------------------------------

# The release components/pins.py pins (MCM_VERSION). `go install` refuses the module here (the proxy answers
# 403 for its version list), so it is built inside a writable copy of the downloaded module, hash checked.
mcm_version() { sed -n 's/^MCM_VERSION = "\(v[^"]*\)"$/\1/p' "$ARBOR_ROOT/components/pins.py"; }

build_mcm() {
  local out=$1 v=$2 src=$WORK/machine-controller-manager
  rm -rf "$src"
  cp -r "$(checked "github.com/gardener/machine-controller-manager@$v" "$MCM_SUM")" "$src"
  chmod -R u+w "$src"
  cd "$src"
  go build -trimpath -ldflags "-s -w" -o "$out/machine-controller-manager" ./cmd/machine-controller-manager
}

# --- gardener-resource-manager -------------------------------------------------------------------------

# On local it serves the KUBERNETES_SERVICE_HOST webhook of every hosted shoot as a process arbor supervises, as
# its image does in a cloud seed. The same release (GARDENER_VERSION in components/pins.py), built like MCM inside
# a writable copy of the hash-checked module: its go.mod replaces ./pkg/apis, which `go install` refuses.
gardener_version() { sed -n 's/^GARDENER_VERSION = "\(v[^"]*\)"$/\1/p' "$ARBOR_ROOT/components/pins.py"; }

build_grm() {
  local out=$1 v=$2 src=$WORK/gardener
  rm -rf "$src"
  cp -r "$(checked "github.com/gardener/gardener@$v" "$GARDENER_SUM")" "$src"
  chmod -R u+w "$src"
  # The module's go.mod replaces its API module with ./pkg/apis, a nested module that is not in the module's zip:
  # the API module of the same release comes from the proxy instead, its hash checked too.
  checked "github.com/gardener/gardener/pkg/apis@$v" "$GARDENER_APIS_SUM" >/dev/null
  cd "$src"
  GOWORK=off go mod edit -dropreplace=github.com/gardener/gardener/pkg/apis -require="github.com/gardener/gardener/pkg/apis@$v"
  # Its go.work would pull in the nested modules the zip leaves out.
  GOWORK=off go build -trimpath -ldflags "-s -w" -o "$out/gardener-resource-manager" ./cmd/gardener-resource-manager
  cd / && rm -rf "$src"
}

# --- MinIO --------------------------------------------------------------------------------------------

# The local landscape's S3-compatible object store (its seeds' backup buckets). The module has no replace lines,
# so `go install` builds it; the release commits are not served, so the pin is the newest commit that is. Its hash
# is checked first, and `go install` then checks every dependency against the checksum database.
build_minio() {
  local out=$1 v=$2
  checked "github.com/minio/minio@$v" "$MINIO_SUM" >/dev/null
  GOBIN=$out go install -trimpath -ldflags "-s -w" "github.com/minio/minio@$v"
}

# --- machine-controller-manager-provider-kwok -----------------------------------------------------------

# arbor's own provider sidecar for local (hack/machine-controller-kwok): MCM's machine-controller library with a
# driver whose machines are kwok Nodes in the shoot. Like nodeagent-validate, built from a copy with its committed
# go.sum, and rebuilt only when its sources change; its unit tests run before every build.
KWOK_DRIVER_SRC=$ARBOR_ROOT/hack/machine-controller-kwok
KWOK_DRIVER=machine-controller-manager-provider-kwok

kwok_driver_test() {
  local mod=$WORK/machine-controller-kwok
  rm -rf "$mod" && cp -r "$KWOK_DRIVER_SRC" "$mod"
  cd "$mod"
  GOFLAGS=$READONLY_GOFLAGS go test -count=1 ./...
}

build_kwok_driver() {
  local out=$1
  kwok_driver_test
  GOFLAGS=$READONLY_GOFLAGS go build -trimpath -ldflags "-s -w" -o "$out/$KWOK_DRIVER" .
}

# --- Pulumi CLI and language host ---------------------------------------------------------------------

# build_pulumi: the CLI and, beside it as in Pulumi's own distribution, the Python language host and the
# scripts shipped with them; a language host next to the CLI is used without a warning.
build_pulumi() {
  local out=$1 v=$2 mod=$WORK/pulumi sdk
  wrapper "$mod" "$(mod_field "github.com/pulumi/pulumi/pkg/v3@$v" GoMod)"
  (
    cd "$mod"
    go get "github.com/pulumi/pulumi/pkg/v3@$v" "github.com/pulumi/pulumi/sdk/v3@$v"
    # Pulumi compares plugin and CLI versions with its own, so the stamp must be the release.
    go build -trimpath -tags osusergo,grpcnotrace -o "$out/pulumi" \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$v" \
      github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  )
  build_language_python "$out"
  # Module files are read-only and carry no exec bit.
  sdk=$(mod_field "github.com/pulumi/pulumi/sdk/v3@$v" Dir)
  install -m0755 "$sdk/python/cmd/pulumi-language-python-exec" "$out/"
  install -m0755 "$sdk/python/dist/pulumi-resource-pulumi-python" "$out/"
}

build_language_python() {
  local out=$1 v=$PULUMI_LANGUAGE_PYTHON_VERSION mod=$WORK/pulumi-language-python
  local host="github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3"
  wrapper "$mod" "$(mod_field "$host@$PULUMI_LANGUAGE_PYTHON_MODULE" GoMod)"
  cd "$mod"
  # Upstream builds the host inside its repository (replace sdk/v3 and pkg/v3 => ../..); pin both siblings
  # to the host's own release instead.
  go get "$host@$PULUMI_LANGUAGE_PYTHON_MODULE" "github.com/pulumi/pulumi/pkg/v3@$v" "github.com/pulumi/pulumi/sdk/v3@$v"
  go build -trimpath -tags osusergo,grpcnotrace -o "$out/pulumi-language-python" \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$v" "$host"
}

pulumi_version() { "$1" version; }

# --- provider plugins ---------------------------------------------------------------------------------

build_kubernetes_plugin() {
  local out=$1 v=$2 src=$WORK/pulumi-kubernetes
  [ "$v" = "$PULUMI_KUBERNETES_PROVIDER_RELEASE" ] ||
    die "requirements.txt pins pulumi-kubernetes $v, hack/versions.sh has provider source of $PULUMI_KUBERNETES_PROVIDER_RELEASE"
  local mod="github.com/pulumi/pulumi-kubernetes/provider/v4@$PULUMI_KUBERNETES_PROVIDER_MODULE"
  rm -rf "$src" && cp -r "$(checked "$mod" "$PULUMI_KUBERNETES_PROVIDER_SUM")" "$src" && chmod -R u+w "$src"
  cd "$src"
  # Upstream builds inside its repository (replace sdk/v4 => ../sdk); pin the SDK module of the release.
  go mod edit -replace "github.com/pulumi/pulumi-kubernetes/sdk/v4=github.com/pulumi/pulumi-kubernetes/sdk/v4@$v"
  go mod download
  # The provider embeds its schema, generated at build time from the checked-in sources.
  (cd cmd/pulumi-resource-kubernetes && VERSION=${v#v} go run generate.go ./schema.json "${v#v}")
  go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$v" \
    -o "$out/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
}

build_command_plugin() {
  local out=$1 v=$2
  checked "github.com/pulumi/pulumi-command/provider@$PULUMI_COMMAND_PROVIDER_MODULE" \
    "$PULUMI_COMMAND_PROVIDER_SUM" >/dev/null
  GOBIN=$out go install -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi-command/provider/pkg/version.Version=$v" \
    "github.com/pulumi/pulumi-command/provider/cmd/pulumi-resource-command@$PULUMI_COMMAND_PROVIDER_MODULE"
}

# command_plugin: the command provider at the release requirements.txt pins, from hack/goproxy/ (its hash
# checked against versions.sh), for `command.local.Command` steps the preview lists.
command_plugin() {
  if [ -z "$PULUMI_COMMAND_PROVIDER_MODULE" ]; then
    say "plugin command" "$PULUMI_COMMAND_PLUGIN_VERSION" \
      "unavailable: the Go module proxy serves no commit of pulumi-command/provider (hack/README.md)"
    return
  fi
  NO_LINK=1 provide command-plugin "$PULUMI_COMMAND_PLUGIN_VERSION" no_version build_command_plugin \
    pulumi-resource-command
  install_plugin resource command "$PULUMI_COMMAND_PLUGIN_VERSION"
}

# install_plugin KIND NAME VERSION: registers a built plugin under exactly the version the Python SDK requests.
install_plugin() {
  local kind=$1 name=$2 v=$3 start=$SECONDS
  local installed=$PULUMI_HOME/plugins/$kind-$name-$v
  if [ -x "$installed/pulumi-$kind-$name" ]; then
    say "plugin $name" "$v" "installed ($((SECONDS - start))s)"
    return
  fi
  local out
  out=$(pulumi plugin install "$kind" "$name" "${v#v}" --file "$ARBOR_TOOLS/$name-plugin-$v/pulumi-$kind-$name" 2>&1) ||
    die "installing plugin $name $v failed: $out"
  say "plugin $name" "$v" "installed now ($((SECONDS - start))s)"
}

no_version() { :; }

# --- cloud provider plugins ---------------------------------------------------------------------------

# The aws and gcp plugins a cloud stack runs on, at the versions requirements.txt pins for their Python SDKs
# (hack/env.sh). They are Pulumi's own releases: `pulumi plugin install` fetches them from Pulumi's registry
# (GitHub releases, then get.pulumi.com), or from ARBOR_PLUGIN_SERVER, a mirror laid out as
# get.pulumi.com/releases/plugins. The local stack needs neither, so a registry that cannot be reached is one
# notice saying what to run later, never a failure.
PLUGIN_REGISTRIES=(https://api.github.com https://get.pulumi.com/releases/plugins)
PLUGIN_PROBE_TIMEOUT_S=5

# probe_registry URL...: whether any of the URLs answers within the timeout (any HTTP status counts: a server
# is there); when none does, prints curl's reason for each.
probe_registry() {
  local url reasons=() reason
  command -v curl >/dev/null || { echo "curl is not installed, so no registry could be tried"; return 1; }
  for url in "$@"; do
    reason=$(curl -sS -o /dev/null -I --connect-timeout "$PLUGIN_PROBE_TIMEOUT_S" \
      --max-time "$PLUGIN_PROBE_TIMEOUT_S" "$url" 2>&1) && return 0
    reasons+=("$url: ${reason:-no answer}")
  done
  printf '%s\n' "${reasons[@]}"
  return 1
}

# cloud_plugins_hint NAME=VERSION...: what to run once a registry is reachable, or from a mirror or a file.
cloud_plugins_hint() {
  local p commands=""
  for p in "$@"; do commands+="${commands:+ && }pulumi plugin install resource ${p%%=*} ${p#*=}"; done
  cat <<EOF
  The local stack does not need them; a gcp or aws stack does. Once a registry is reachable, run \`make tools\`
  again, or in this clone's environment (the plugins belong in arbor's PULUMI_HOME):
    eval "\$(make -s env)" && $commands
  From a mirror of get.pulumi.com/releases/plugins: ARBOR_PLUGIN_SERVER=<mirror URL> make tools
  From a plugin tarball or binary on this machine: pulumi plugin install resource <name> <version> --file <path>
EOF
}

# cloud_plugins: each of aws and gcp installed already, fetched now, or named in one notice with what to do.
cloud_plugins() {
  local name v missing=() failed=() reason out start
  for name in aws gcp; do
    v=PULUMI_${name^^}_PLUGIN_VERSION
    v=${!v}
    if [ -x "$PULUMI_HOME/plugins/resource-$name-$v/pulumi-resource-$name" ]; then
      say "plugin $name" "$v" "installed (0s)"
    else
      missing+=("$name=${v#v}")
    fi
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  local server=${ARBOR_PLUGIN_SERVER:-} registries=("${PLUGIN_REGISTRIES[@]}")
  [ -z "$server" ] || registries=("$server")
  if ! reason=$(probe_registry "${registries[@]}"); then
    for name in "${missing[@]}"; do
      say "plugin ${name%%=*}" "v${name#*=}" "not installed: no plugin registry reachable"
    done
    sed 's/^/  tried /' <<<"$reason"
    cloud_plugins_hint "${missing[@]}"
    return 0
  fi
  for name in "${missing[@]}"; do
    start=$SECONDS
    if out=$(pulumi plugin install resource "${name%%=*}" "${name#*=}" ${server:+--server "$server"} 2>&1); then
      say "plugin ${name%%=*}" "v${name#*=}" "installed now ($((SECONDS - start))s)"
    else
      say "plugin ${name%%=*}" "v${name#*=}" "not installed: $(tail -n1 <<<"$out")"
      failed+=("$name")
    fi
  done
  [ ${#failed[@]} -eq 0 ] || cloud_plugins_hint "${failed[@]}"
}

# provide_tool T: one tool of the list below, built or taken from the cache or PATH.
provide_tool() {
  case $1 in
  kubernetes) provide kubernetes "$KUBERNETES_VERSION" 'kube_version "$1"' build_kubernetes \
    kube-apiserver kube-controller-manager kube-scheduler kubectl ;;
  etcd) provide etcd "$ETCD_VERSION" 'etcd_version "$1"' build_etcd etcd etcdctl etcdutl ;;
  kwok) provide kwok "$KWOK_VERSION" 'kwok_version "$1"' build_kwok kwok kwokctl ;;
  # MCM prints no version (its --version flag is absent), so only the cache answers for it.
  mcm) provide machine-controller-manager "$(mcm_version)" no_version build_mcm machine-controller-manager ;;
  # A build from the module carries no version stamp, so only the cache answers for it.
  # A `go install` build reports no release (DEVELOPMENT.GOGET), so only the cache answers for it.
  minio) provide minio "$MINIO_VERSION" no_version build_minio minio ;;
  grm) provide gardener-resource-manager "$(gardener_version)" no_version build_grm gardener-resource-manager ;;
  pulumi) CACHE_SUFFIX=+python-$PULUMI_LANGUAGE_PYTHON_VERSION provide pulumi "$PULUMI_VERSION" \
    'pulumi_version "$1"' build_pulumi \
    pulumi pulumi-language-python pulumi-language-python-exec pulumi-resource-pulumi-python
    # `pulumi` on PATH runs the engine in a TMPDIR of its own (hack/pulumi-run says why).
    ln -sfn "$(readlink "$ARBOR_BIN/pulumi")" "$ARBOR_BIN/pulumi-engine"
    ln -sfn "$ARBOR_ROOT/hack/pulumi-run" "$ARBOR_BIN/pulumi" ;;
  kubernetes-plugin)
    NO_LINK=1 provide kubernetes-plugin "$PULUMI_KUBERNETES_PLUGIN_VERSION" no_version build_kubernetes_plugin \
      pulumi-resource-kubernetes
    install_plugin resource kubernetes "$PULUMI_KUBERNETES_PLUGIN_VERSION" ;;
  command-plugin) command_plugin ;;
  cloud-plugins) cloud_plugins ;;
  kwok-driver) CACHE_SUFFIX=+src-$(sources "$KWOK_DRIVER_SRC") provide "$KWOK_DRIVER" "$(mcm_version)" no_version \
    build_kwok_driver "$KWOK_DRIVER" ;;
  # The driver's Go tests on their own, whatever the cache holds (tests/integration/test_kwok_driver.py).
  kwok-driver-test) (kwok_driver_test) ;;
  nodeagent-validate) CACHE_SUFFIX=+src-$(sources "$NODEAGENT_VALIDATE_SRC") provide nodeagent-validate \
    "$(nodeagent_validate_gardener)" 'nodeagent_validate_version "$1"' build_nodeagent_validate nodeagent-validate ;;
  *) die "unknown tool '$1'" ;;
  esac
}

# lane T...: the tools in order, each after the one before (a plugin is installed with the CLI built before it).
lane() {
  local t
  for t in "$@"; do provide_tool "$t"; done
}

main() {
  if [ $# -gt 0 ]; then
    lane "$@"
    return
  fi
  # Every tool `make up` needs (nodeagent-validate is only for its test, which asks for it), in two lanes side by
  # side: downloads, code generation and links run on one core, and the other lane's compiling fills the rest.
  # On two cores compiling alone keeps both busy, so the lanes gain nothing there (bench/README.md); they do on more.
  lane kubernetes etcd kwok mcm kwok-driver minio &
  local runtime=$!
  lane pulumi kubernetes-plugin command-plugin cloud-plugins grm &
  local engine=$! rc=0
  wait "$runtime" || rc=$?
  wait "$engine" || rc=$?
  return "$rc"
}

export -f kube_version etcd_version kwok_version pulumi_version nodeagent_validate_version no_version
main "$@"
