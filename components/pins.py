"""Upstream versions arbor pins, with the images they name: machine-controller-manager and its provider sidecars.

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
# Each provider's MCM sidecar. provider-local's is built from Gardener itself, and its image vector leaves the tag
# to the release: arbor tags it with the Gardener release above, under the extensions' path. On local nothing pulls
# it (kwok only simulates the pod).
MCM_PROVIDERS = {
    "aws": Image(f"{RELEASES}/machine-controller-manager-provider-aws", "v0.28.1"),
    "gcp": Image(f"{RELEASES}/machine-controller-manager-provider-gcp", "v0.28.1"),
    "local": Image(f"{RELEASES}/extensions/machine-controller-manager-provider-local", GARDENER_VERSION),
}
