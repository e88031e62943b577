# shellcheck shell=bash
# One place for every tool version arbor builds; sourced by hack/env.sh. The pulumi CLI and the plugins are
# built at the versions requirements.txt pins for their Python SDKs (hack/env.sh reads them from there);
# tools.sh refuses to build a plugin from source that belongs to another release than the pin.

# Kubernetes control plane (one minor for all three binaries), etcd to match, kwok/kwokctl.
KUBERNETES_VERSION=v1.34.4
ETCD_VERSION=v3.6.5
KWOK_VERSION=v0.8.0
# MinIO, the local object store: the newest commit the module proxy serves (its release commits are not), and the
# h1: hash of that module, checked before tools.sh builds it.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_SUM=h1:/qdoYujxF5MBLDMVLeiYJ/7fBa1HikX39Dvzb9Ji8pA=
# machine-controller-manager's version is pinned once, in components/pins.py (MCM_VERSION, Gardener's pin): the image
# arbor renders, the CRDs copied from its Go module (hack/machine_crds.py) and any build of it use that release.
# The h1: hash of that release's module, checked before tools.sh builds the controller from it.
MCM_SUM=h1:TQ4Qs9aaYTqSkqFownIaEAvnrYoNpBMcp7ZMYVEgUWM=
# gardener-resource-manager on local is built from gardener's module at GARDENER_VERSION (components/pins.py), the
# release whose image the cloud seeds run; the h1: hash of that module, checked before the build.
GARDENER_SUM=h1:C+L/5df4m5PC/0yY332YK82X+R4ozDUdajGiZPsb7sQ=
GARDENER_APIS_SUM=h1:SU9vRWk+Cbz+v2V6k9ZJ9lLFZTVYKtPJVK/SlkY5MXk=

# Go module coordinates of the Pulumi language host and plugins. These modules carry no tags; the Go module
# proxy serves some commits as pseudo-versions, and not the release commits of recent versions. Each pin
# below is the newest commit the proxy serves, with the release it belongs to (hack/README.md has how they
# were found and what that costs).
#   language host: the v3.163.0 release commit (pulumi/pulumi 49fb14839a5a); later release commits are not
#   served. It is built with pkg/v3 and sdk/v3 at v3.163.0, a release's own set, and stamped v3.163.0.
PULUMI_LANGUAGE_PYTHON_VERSION=v3.163.0
PULUMI_LANGUAGE_PYTHON_MODULE=v3.0.0-20250417110128-49fb14839a5a
#   kubernetes: pulumi-kubernetes f47bc2d6f199 (2026-01-15), on main a day before the v4.25.0 release commit
#   144dd813d53e (2026-01-16), which the proxy does not serve; stamped v4.25.0, as the Python SDK requests.
PULUMI_KUBERNETES_PROVIDER_RELEASE=v4.25.0
PULUMI_KUBERNETES_PROVIDER_MODULE=v4.0.0-20260115033456-f47bc2d6f199
PULUMI_KUBERNETES_PROVIDER_SUM=h1:j2bphCf7c2YhnBrhwht2f3TNRRgcMImltUlAgzxr9H4=
#   command: the v1.2.1 release, which the module proxy does not serve; hack/goproxy/ (a file:// module mirror,
#   the first entry of GOPROXY in tools.sh) holds it, and its hash is pinned here.
PULUMI_COMMAND_PROVIDER_MODULE=v1.2.1
PULUMI_COMMAND_PROVIDER_SUM=h1:mMeqiVu/gjA55IWvfcVnZ+/E18fU9aG4EAR+owuXq9w=
# The checksum database reachable here has no record of these modules, so Go skips it for them; the wrappers'
# go.sum files committed under hack/gosum/ (and the provider hash above, and hack/nodeagent-validate/go.sum for
# gardener) pin their content instead.
ARBOR_UNLISTED_MODULES=github.com/pulumi/pulumi-command/provider,github.com/pulumi/pulumi/pkg,github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python,github.com/pulumi/pulumi-kubernetes/provider,github.com/gardener/gardener,github.com/gardener/machine-controller-manager
