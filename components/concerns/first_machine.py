"""A self-hosted cloud shoot's control-plane machine, wired: bundle, machine and balancer, records, the API gate.

Gardener bootstraps such a shoot with `gardenadm`; arbor makes the one control-plane machine itself. Its first boot
(render/first_boot.py) carries the control-plane pool's OSC with the static pods, kubelet's own client certificate
and node-init with the shoot's bootstrap token; the provider keeps it where only that machine reads it and puts a
load balancer in front of kube-apiserver. The API's records point at the balancer, and nothing is applied to the
shoot before the API answers there (ApiServing). The bootstrap token's Secret then lets node-agent join.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.bundles import ClusterAccess, NetworkAccess
from components.concerns.control_plane import NodeCas, StaticControlPlane, trusting
from components.concerns.exposure import api_records
from components.concerns.objects import secret_object
from components.concerns.shoot_pki import ShootPki
from components.plan import bootstrap
from components.plan.osc import Part
from components.plan.values import ShootValues
from components.providers.contract import InfrastructureProvider
from components.reconciler.api_serving import ApiServing
from components.render import first_boot, nodeagent, pki


def first_boot_bundle(
    values: ShootValues, static: StaticControlPlane, credentials: ShootPki, cas: NodeCas
) -> pulumi.Output[str]:
    """The machine's packed first boot, once the CAs, the static pods and its credentials are issued (secret)."""
    machine = values.control_plane_machine
    assert machine is not None, "only a self-hosted cloud shoot has a control-plane machine"
    node = values.node_settings[machine.deployment.pool]
    kubelet, token = credentials[pki.kubelet_credential(machine.name)], credentials[pki.BOOTSTRAP_TOKEN]

    def render(got: list[Any]) -> str:
        cas_got, part, cert, key, token_id, token_secret = got
        assert isinstance(part, Part)
        trusted = trusting(node, cas_got)
        client = first_boot.KubeletClient(node.api_server, cas_got[0], cert, key)
        script = first_boot.bundle(
            nodeagent.reconcile_osc(trusted, [part]),
            bootstrap.provision_osc(trusted),
            client,
            machine.name,
            f"{token_id}.{token_secret}",
        )
        return first_boot.packed(script, values.ref)

    got = pulumi.Output.all(cas, static.part, kubelet.cert, kubelet.key, token.cert, token.key)
    return pulumi.Output.secret(got.apply(render))


def control_plane_machine(
    name: str,
    values: ShootValues,
    infra: InfrastructureProvider,
    network: NetworkAccess,
    bundle: pulumi.Output[str],
    kubeconfig: pulumi.Output[str],
    parent: pulumi.Resource,
) -> list[pulumi.Resource]:
    """The machine and its balancer, the API's records, then the gate that exists once the API serves there."""
    exposed = infra.control_plane_machine(values, network, bundle, parent)
    records = api_records(name, values, exposed.address, parent=parent, after=exposed.ready)
    gate = ApiServing(
        f"{name}-api-serving",
        shoot=values.ref,
        kubeconfig=kubeconfig,
        machine=exposed.machine,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*exposed.ready, *records]),
    )
    return [gate]


def bootstrap_token(
    name: str, access: ClusterAccess, credentials: ShootPki, parent: pulumi.Resource
) -> pulumi.Resource:
    """The bootstrap token's Secret in the shoot's kube-system, which the machine's node-agent joins with."""
    token = credentials[pki.BOOTSTRAP_TOKEN]
    assert token.cert is not None  # a token always has its id
    secret = token.cert.apply(lambda token_id: nodeagent.bootstrap_token_secret(token_id, "")["metadata"])
    obj = pulumi.Output.all(token.cert, token.key).apply(lambda got: nodeagent.bootstrap_token_secret(got[0], got[1]))
    in_shoot = pulumi.ResourceOptions(parent=parent, provider=access.provider, depends_on=list(access.ready))
    return secret_object(
        f"{name}-bootstrap-token",
        {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token", "metadata": secret,
         "stringData": obj.apply(lambda o: o["stringData"])},
        in_shoot,
    )  # fmt: skip
