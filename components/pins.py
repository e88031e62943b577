"""Upstream versions arbor pins, with the images they name: MCM and its sidecars, the shoot's system components.

The pins are Gardener's own, read from the image vectors of the releases named below: gardener's
`imagevector/containers.yaml` (machine-controller-manager) and each provider extension's
`imagevector/images.yaml` (its sidecar). Update them together from newer releases. `MCM_VERSION` is also the Go
module version of machine-controller-manager that the machine CRDs are copied from (hack/machine_crds.py) and that
a build of MCM from source is to use, so the image, the CRDs and such a binary are one release. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass

RELEASES = "europe-docker.pkg.dev/gardener-project/releases/gardener"
# The releases the pins below are read from: gardener v1.149.3, gardener-extension-provider-aws v1.73.0 and
# gardener-extension-provider-gcp v1.54.1.
GARDENER_VERSION = "v1.149.3"

MCM_MODULE = "github.com/gardener/machine-controller-manager"
MCM_VERSION = "v0.62.1"


@dataclass(frozen=True)
class Image:
    """A container image: repository and tag."""

    repository: str
    tag: str

    @property
    def ref(self) -> str:
        """`<repository>:<tag>`, as a container's `image` names it."""
        return f"{self.repository}:{self.tag}"


MCM = Image(f"{RELEASES}/machine-controller-manager", MCM_VERSION)
# gardener-resource-manager of the Gardener release above (its image vector leaves the tag to the release); on local
# the same release runs as a process built from gardener's module (hack/tools.sh).
RESOURCE_MANAGER = Image(f"{RELEASES}/resource-manager", GARDENER_VERSION)
# Each provider's MCM sidecar. provider-local's is built from Gardener itself, and its image vector leaves the tag
# to the release: arbor tags it with the Gardener release above, under the extensions' path. On local nothing pulls
# it (kwok only simulates the pod).
MCM_PROVIDERS = {
    "aws": Image(f"{RELEASES}/machine-controller-manager-provider-aws", "v0.28.1"),
    "gcp": Image(f"{RELEASES}/machine-controller-manager-provider-gcp", "v0.28.1"),
    "local": Image(f"{RELEASES}/extensions/machine-controller-manager-provider-local", GARDENER_VERSION),
}


# System components in every shoot (components/render/system/). kube-proxy runs each pool's Kubernetes version
# (its image tag is `v<version>`); CoreDNS and the network plugins are pinned here, read from the releases Gardener's
# gardener v1.149 and networking extensions ship with (CoreDNS 1.12, calico 3.30, cilium 1.17). On local nothing pulls
# them (kwok only simulates the pods).
KUBE_PROXY_REPOSITORY = "registry.k8s.io/kube-proxy"
COREDNS = Image("registry.k8s.io/coredns/coredns", "v1.12.2")
CALICO_VERSION = "v3.30.3"
CALICO_NODE = Image("quay.io/calico/node", CALICO_VERSION)
CALICO_CNI = Image("quay.io/calico/cni", CALICO_VERSION)
CALICO_KUBE_CONTROLLERS = Image("quay.io/calico/kube-controllers", CALICO_VERSION)
CILIUM_VERSION = "v1.17.6"
CILIUM = Image("quay.io/cilium/cilium", CILIUM_VERSION)
CILIUM_OPERATOR = Image("quay.io/cilium/operator-generic", CILIUM_VERSION)


def kube_proxy(kubernetes_version: str) -> Image:
    """kube-proxy of a pool's Kubernetes version (`1.34.4` -> `registry.k8s.io/kube-proxy:v1.34.4`)."""
    return Image(KUBE_PROXY_REPOSITORY, f"v{kubernetes_version}")
