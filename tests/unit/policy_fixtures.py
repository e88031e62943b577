"""Resources as the policy engine hands them over, for the policy tests: one passing and one violating each."""

from __future__ import annotations

import base64
import json
from typing import Any

from arbor_policies import access, cloud, kubernetes, landscape, network, rbac
from arbor_policies.resource import Resource

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
POD = "kubernetes:core/v1:Pod"
LOCAL = {"clusterIdentifier": "local:local-seed-local-1"}
CLOUD = {"clusterIdentifier": "gcp:prod-seed"}
CERT = "pulumi-python:dynamic/arbor:Certificate"
DAY = 86400


def container(name: str = "kube-apiserver", **changes: Any) -> dict[str, Any]:
    """A control-plane container as arbor renders it (pinned image, requests set), with `changes` on top."""
    base: dict[str, Any] = {
        "name": name,
        "image": "registry.k8s.io/kube-apiserver:v1.34.4",
        "command": ["kube-apiserver", "--encryption-provider-config=/srv/kubernetes/enc/config.yaml"],
        "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}},
    }
    return {**base, **changes}


def bucket_policy(action: str | list[str], resource: str | list[str]) -> Resource:
    """An S3 bucket policy letting anyone do `action` on `resource`, beside the TLS denial arbor's buckets have."""
    deny = {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::b/*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}}}  # fmt: skip
    allow = {"Effect": "Allow", "Principal": "*", "Action": action, "Resource": resource}
    return Resource(cloud.S3_BUCKET_POLICY, {"policy": json.dumps({"Statement": [deny, allow]})}, "p")


def deployment(*containers: dict[str, Any], namespace: str = "shoot--dev--web", **pod: Any) -> Resource:
    """A Deployment in a seed namespace with these containers and pod spec fields."""
    spec = {"containers": list(containers) or [container()], **pod}
    props = {
        "metadata": {"name": "kube-apiserver", "namespace": namespace, "labels": {"app": "kubernetes"}},
        "spec": {"template": {"metadata": {"labels": {"app": "kubernetes"}}, "spec": spec}},
    }
    return Resource(DEPLOYMENT, props, name="arbor-shoot-dev-web-kube-apiserver", provider=LOCAL)


def static_pod(name: str = "kube-apiserver-node-0", **pod: Any) -> Resource:
    """A self-hosted shoot's mirror pod in kube-system."""
    props = {"metadata": {"name": name, "namespace": "kube-system"}, "spec": {"containers": [container()], **pod}}
    return Resource(POD, props, name=f"arbor-shoot-ops-root-{name}")


def service(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> Resource:
    """A Service in a seed namespace."""
    meta = {"name": "ingress", "namespace": "shoot--dev--web", "annotations": annotations or {}}
    return Resource(kubernetes.SERVICE, {"metadata": meta, "spec": spec}, provider=CLOUD)


def etcd(provider: dict[str, str], claims: bool) -> Resource:
    """Etcd main's StatefulSet, with or without a volumeClaimTemplate."""
    spec: dict[str, Any] = {"template": {"spec": {"containers": [container("etcd")]}}}
    if claims:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}}]
    meta = {"name": "etcd-main", "namespace": "shoot--dev--web", "labels": {"app": "etcd-statefulset"}}
    return Resource(kubernetes.STATEFUL_SET, {"metadata": meta, "spec": spec}, name="etcd-main", provider=provider)


def binding(role: str, subject: str, kind: str = "Group") -> Resource:
    """A ClusterRoleBinding of `role` to one subject."""
    props = {"metadata": {"name": "b"}, "roleRef": {"name": role}, "subjects": [{"kind": kind, "name": subject}]}
    return Resource(rbac.BINDINGS[0], props)


def role(api_groups: list[str], resources: list[str]) -> Resource:
    """A ClusterRole with one rule."""
    props = {"metadata": {"name": "r"}, "rules": [{"apiGroups": api_groups, "resources": resources, "verbs": ["*"]}]}
    return Resource(rbac.ROLES[0], props)


def shoot(version: str = "1.34.4", labels: dict[str, str] | None = None, pool: str | None = None) -> Resource:
    """A Shoot record."""
    meta: dict[str, Any] = {"name": "web", "namespace": "garden-dev"}
    if labels:
        meta["labels"] = labels
    workers = [{"name": "pool-a", **({"kubernetesVersion": pool} if pool else {})}]
    spec = {"kubernetes": {"version": version}, "provider": {"workers": workers}}
    return Resource(landscape.SHOOT, {"metadata": meta, "spec": spec})


def project(*roles: str) -> Resource:
    """A Project record with a member per role."""
    members = [{"kind": "User", "name": f"u{i}", "role": r} for i, r in enumerate(roles)]
    return Resource(landscape.PROJECT, {"metadata": {"name": "dev"}, "spec": {"members": members}})


def local_cluster(name: str, encrypted: bool, version: str = "v1.34.4") -> Resource:
    """A LocalCluster dynamic resource."""
    props: dict[str, Any] = {"clusterName": name.removeprefix("arbor-"), "kubernetesVersion": version}
    if encrypted:
        props["encryptionConfig"] = "<secret>"
    return Resource(landscape.LOCAL_CLUSTER, props, name=name)


def aws_class(**spec: Any) -> Resource:
    """An AWS MachineClass as arbor renders it, with `spec` changes."""
    base = {
        "instanceMetadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2},
        "blockDevices": [{"ebs": {"volumeSize": 50, "encrypted": True}}],
    }
    props = {"metadata": {"name": "shoot--dev--web-a-z1", "namespace": "shoot--dev--web"}, "provider": "AWS",
             "providerSpec": {**base, **spec}}  # fmt: skip
    return Resource(cloud.MACHINE_CLASS, props)


def gcp_class(**spec: Any) -> Resource:
    """A GCP MachineClass as arbor renders it, with `spec` changes."""
    base = {
        "networkInterfaces": [{"subnetwork": "s", "disableExternalIP": True}],
        "metadata": [{"key": "block-project-ssh-keys", "value": "TRUE"}],
    }
    props = {"metadata": {"name": "shoot--dev--web-a-z1", "namespace": "shoot--dev--web"}, "provider": "GCP",
             "providerSpec": {**base, **spec}}  # fmt: skip
    return Resource(cloud.MACHINE_CLASS, props)


def shoot_records(*ranges: str) -> list[Resource]:
    """Shoot records on seed s, one per nodes range given."""
    return [
        Resource(network.SHOOT_RECORD, {"metadata": {"name": f"s{i}", "namespace": "garden-dev"},
                                        "spec": {"seedName": "s", "networking": {"nodes": [cidr]}}})
        for i, cidr in enumerate(ranges)
    ]  # fmt: skip


def extension_secret(kubeconfig_user: dict[str, Any], namespace: str = "extension-provider-local") -> Resource:
    """A Secret holding a kubeconfig (as `data`, base64) whose one user is `kubeconfig_user`."""
    config = {"apiVersion": "v1", "kind": "Config", "users": [{"name": "u", "user": kubeconfig_user}]}
    data = {"kubeconfig": base64.b64encode(json.dumps(config).encode()).decode()}
    props = {"metadata": {"name": "garden", "namespace": namespace}, "data": data}
    return Resource(access.SECRET, props, name="s")


def access_token(seconds: float | None) -> Resource:
    """An AccessToken of an extension's garden identity with this lifetime (None: none given)."""
    props: dict[str, Any] = {"namespace": "seed-local-1", "serviceAccount": "extension-provider-local"}
    if seconds is not None:
        props["expirationSeconds"] = seconds
    return Resource(access.ACCESS_TOKEN, props, name="t")


# (policy, resources, a message that names the fault) for a violation; message None for a passing case.
CASES: list[tuple[str, list[Resource], str | None]] = [
    ("kubernetes-provider-cluster-identifier", [Resource(kubernetes.KUBERNETES_PROVIDER, {"kubeconfig": "x"})],
     "Kubernetes provider without cluster_identifier"),
    ("kubernetes-provider-cluster-identifier",
     [Resource(kubernetes.KUBERNETES_PROVIDER, {"clusterIdentifier": "local:local-garden"})], None),
    ("local-no-load-balancer", [Resource(kubernetes.SERVICE, {"spec": {"type": "LoadBalancer"}}, provider=LOCAL)],
     "Service of type LoadBalancer in a local stack"),
    ("local-no-load-balancer", [Resource(kubernetes.SERVICE, {"spec": {"type": "ClusterIP"}}, provider=LOCAL)], None),
    ("load-balancer-restricted", [service({"type": "LoadBalancer"})],
     "Service shoot--dev--web/ingress is a LoadBalancer open to the internet"),
    ("load-balancer-restricted", [service({"type": "LoadBalancer", "loadBalancerSourceRanges": ["0.0.0.0/0"]})],
     "open to the internet: set spec.loadBalancerSourceRanges"),
    ("load-balancer-restricted", [service({"type": "LoadBalancer", "loadBalancerSourceRanges": ["203.0.113.0/24"]})],
     None),
    ("load-balancer-restricted",
     [service({"type": "LoadBalancer"}, {"networking.gke.io/load-balancer-type": "Internal"})], None),
    ("no-privileged-containers", [deployment(container(securityContext={"privileged": True}))],
     "Deployment shoot--dev--web/kube-apiserver container kube-apiserver runs privileged"),
    ("no-privileged-containers", [deployment(container(securityContext={"privileged": False}))], None),
    ("host-network-only-control-plane", [deployment(hostNetwork=True)],
     "Deployment shoot--dev--web/kube-apiserver uses hostNetwork"),
    ("host-network-only-control-plane", [static_pod(hostNetwork=True)], None),
    ("host-network-only-control-plane", [static_pod("node-exporter-node-0", hostNetwork=True)],
     "Pod kube-system/node-exporter-node-0 uses hostNetwork"),
    ("containers-request-resources", [deployment(container(resources={"requests": {"cpu": "10m"}}))],
     "container kube-apiserver requests no memory: set resources.requests.memory"),
    ("containers-request-resources", [deployment()], None),
    ("images-pinned", [deployment(container(image="registry.k8s.io/kube-apiserver"))],
     "image 'registry.k8s.io/kube-apiserver' is not pinned"),
    ("images-pinned", [deployment(container(image="registry.k8s.io/pause:latest"))], "is not pinned"),
    ("images-pinned", [deployment(container(image="localhost:5000/etcd@sha256:0123"))], None),
    ("images-pinned", [deployment()], None),
    ("images-from-allowed-registries", [deployment(container(image="docker.io/library/nginx:1.27"))],
     "image 'docker.io/library/nginx:1.27' is not from an allowed registry"),
    ("images-from-allowed-registries", [deployment()], None),
    ("etcd-persistent-on-cloud-seeds", [etcd(CLOUD, claims=False)],
     "StatefulSet shoot--dev--web/etcd-main keeps etcd's data in an emptyDir on a cloud seed"),
    ("etcd-persistent-on-cloud-seeds", [etcd(CLOUD, claims=True)], None),
    ("etcd-persistent-on-cloud-seeds", [etcd(LOCAL, claims=False)], None),
    ("namespaces-labelled-with-owner", [Resource(kubernetes.NAMESPACE, {"metadata": {"name": "scratch"}})],
     "Namespace scratch has none of the labels arbor.dev/project, arbor.dev/seed"),
    ("namespaces-labelled-with-owner",
     [Resource(kubernetes.NAMESPACE, {"metadata": {"name": "garden-dev", "labels": {"arbor.dev/project": "dev"}}})],
     None),
    ("no-cluster-admin-bindings", [binding("cluster-admin", "developers")],
     "ClusterRoleBinding b binds cluster-admin to Group developers"),
    ("no-cluster-admin-bindings", [binding("cluster-admin", "system:masters")], None),
    ("no-cluster-admin-bindings", [binding("view", "developers")], None),
    ("no-public-rbac-subjects", [binding("view", "system:authenticated")],
     "ClusterRoleBinding b grants its role to Group system:authenticated"),
    ("no-public-rbac-subjects", [binding("view", "readers")], None),
    ("no-public-rbac-subjects", [binding("system:service-account-issuer-discovery", "system:unauthenticated")], None),
    ("no-public-rbac-subjects", [binding("system:public-info-viewer", "system:unauthenticated")],
     "ClusterRoleBinding b grants its role to Group system:unauthenticated"),
    ("no-wildcard-rbac-rules", [role(["*"], ["*"])], "ClusterRole r rule 0 grants every resource"),
    ("no-wildcard-rbac-rules", [role(["arbor.dev"], ["shoots"])], None),
    ("project-has-admin", [project("viewer")], "project dev has no admin"),
    ("project-has-admin", [project("viewer", "admin")], None),
    ("kubernetes-version-supported", [shoot("1.31.2")],
     "shoot garden-dev/web control plane runs Kubernetes 1.31.2, whose minor is not supported"),
    ("kubernetes-version-supported", [shoot(pool="1.30.1")], "shoot garden-dev/web pool pool-a runs Kubernetes 1.30.1"),
    ("kubernetes-version-supported", [local_cluster("arbor-garden-cluster", True, version="v1.29.0")],
     "cluster garden-cluster API server runs Kubernetes v1.29.0"),
    ("kubernetes-version-supported", [shoot(), local_cluster("arbor-garden-cluster", True)], None),
    ("shoot-owner-labels", [shoot()], "shoot garden-dev/web has no label team: set landscape.shoots[].labels.team"),
    ("shoot-owner-labels", [shoot(labels={"team": "web"})], None),
    ("admin-kubeconfig-lifetime",
     [Resource(landscape.ADMIN_KUBECONFIG, {"expirationSeconds": 86400}, name="arbor-shoot-dev-web-admin")],
     "admin kubeconfig arbor-shoot-dev-web-admin is valid for 24h, longer than 8h"),
    ("admin-kubeconfig-lifetime", [Resource(landscape.ADMIN_KUBECONFIG, {"expirationSeconds": 3600})], None),
    ("certificate-lifetime", [Resource(CERT, {"validitySeconds": 365 * DAY, "commonName": "kube-apiserver"}, "c")],
     "certificate c (kube-apiserver) is valid for 365 days, longer than 90"),
    ("certificate-lifetime", [Resource(landscape.AUTHORITY, {"validitySeconds": 7300 * DAY}, "ca")],
     "certificate authority ca is valid for 7300 days, longer than 3650"),
    ("certificate-lifetime",
     [Resource(landscape.LEAF_SET, {"leaves": {"etcd": {"validitySeconds": 90 * DAY},
                                               "kube-apiserver": {"validitySeconds": 91 * DAY, "commonName": "api"}}},
               "arbor-shoot-ops-root-pki-leaves")],
     "certificate arbor-shoot-ops-root-pki-leaves/kube-apiserver (api) is valid for 91 days, longer than 90"),
    ("certificate-lifetime", [Resource(CERT, {"validitySeconds": 90 * DAY}, "c"),
                              Resource(landscape.AUTHORITY, {"validitySeconds": 3650 * DAY}, "ca")], None),
    ("secrets-encrypted-at-rest", [local_cluster("arbor-garden-cluster", encrypted=False)],
     "cluster garden-cluster (arbor-garden-cluster) runs without encryption at rest"),
    ("secrets-encrypted-at-rest", [deployment(container(command=["kube-apiserver", "--etcd-servers=x"]))],
     "Deployment shoot--dev--web/kube-apiserver runs kube-apiserver without --encryption-provider-config"),
    ("secrets-encrypted-at-rest", [local_cluster("arbor-shoot-dev-web-cluster", encrypted=True), deployment(),
                                   local_cluster("arbor-seed-local-1-cluster", encrypted=False)], None),
    ("data-bearing-resources-protected", [Resource(landscape.AUTHORITY, {}, name="arbor-shoot-dev-web-pki-ca")],
     "CertificateAuthority arbor-shoot-dev-web-pki-ca is not protected"),
    ("data-bearing-resources-protected", [Resource(landscape.LOCAL_CLUSTER, {}, name="arbor-garden-cluster")],
     "LocalCluster arbor-garden-cluster is not protected"),
    ("data-bearing-resources-protected", [etcd(LOCAL, claims=False)], None),
    ("data-bearing-resources-protected", [Resource(landscape.AUTHORITY, {}, name="ca", protect=True),
                                          Resource(CERT, {}, name="leaf")], None),
    ("no-overlap-across-shoots-of-a-seed", shoot_records("10.250.0.0/16", "10.250.128.0/17"),
     "shoots garden-dev/s0 and garden-dev/s1 on seed 's' overlap: nodes 10.250.0.0/16 and nodes 10.250.128.0/17"),
    ("no-overlap-across-shoots-of-a-seed", shoot_records("10.250.0.0/16", "10.251.0.0/16"), None),
    ("no-world-ingress", [Resource(network.GCP_FIREWALL, {"sourceRanges": ["0.0.0.0/0"]})], "ingress from 0.0.0.0/0"),
    ("no-world-ingress", [Resource(network.GCP_FIREWALL, {"sourceRanges": ["10.250.0.0/16"]})], None),
    ("ipv6-subnets-are-64", [Resource(network.AWS_SUBNET, {"ipv6CidrBlock": "2600:1f18::/56"})],
     "IPv6 subnet 2600:1f18::/56 is a /56"),
    ("ipv6-subnets-are-64", [Resource(network.AWS_SUBNET, {"ipv6CidrBlock": "2600:1f18::/64"})], None),
    ("aws-imdsv2-required", [aws_class(instanceMetadataOptions={"httpTokens": "optional"})],
     "MachineClass shoot--dev--web/shoot--dev--web-a-z1 allows IMDSv1"),
    ("aws-imdsv2-required",
     [aws_class(instanceMetadataOptions={"httpTokens": "required", "httpPutResponseHopLimit": 3})],
     "travel 3 hops: set httpPutResponseHopLimit to 2 or less"),
    ("aws-imdsv2-required", [aws_class()], None),
    ("aws-machine-disks-encrypted", [aws_class(blockDevices=[{"ebs": {"encrypted": False}}])],
     "block device 0 is not encrypted"),
    ("aws-machine-disks-encrypted", [aws_class()], None),
    ("gcp-machines-without-external-ip", [gcp_class(networkInterfaces=[{"subnetwork": "s"}])],
     "network interface 0 gets an external IP"),
    ("gcp-machines-without-external-ip", [gcp_class()], None),
    ("gcp-project-ssh-keys-blocked", [gcp_class(metadata=[])], "accepts project-wide SSH keys"),
    ("gcp-project-ssh-keys-blocked", [gcp_class()], None),
    ("eks-endpoint-restricted", [Resource(cloud.EKS_CLUSTER, {"vpcConfig": {"endpointPublicAccess": True}}, "eks")],
     "EKS cluster eks serves its API to the whole internet"),
    ("eks-endpoint-restricted", [Resource(cloud.EKS_CLUSTER, {"vpcConfig": {
        "endpointPublicAccess": True, "publicAccessCidrs": ["198.51.100.0/24"]}}, "eks")], None),
    ("gke-deletion-protection", [Resource(cloud.GKE_CLUSTER, {"deletionProtection": False}, "gke")],
     "GKE cluster gke has deletion protection off"),
    ("gke-deletion-protection", [Resource(cloud.GKE_CLUSTER, {"deletionProtection": True}, "gke")], None),
    ("data-bearing-resources-protected", [Resource(cloud.S3_BUCKET, {}, name="arbor-seed-s-backup")],
     "Bucket arbor-seed-s-backup is not protected"),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.GCS_BUCKET, {"uniformBucketLevelAccess": True, "publicAccessPrevention": "inherited",
                                  "versioning": {"enabled": True}}, "b")],
     "Bucket b: public access is not prevented"),
    ("backup-buckets-private-and-versioned", [Resource(cloud.S3_BUCKET, {"forceDestroy": True}, "b")],
     "Bucket b: forceDestroy deletes every backup with the bucket"),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.S3_VERSIONING, {"versioningConfiguration": {"status": "Suspended"}}, "v")],
     "BucketVersioning v: versioning is not enabled"),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.S3_PUBLIC_ACCESS_BLOCK, {"blockPublicAcls": False, "blockPublicPolicy": True,
                                              "ignorePublicAcls": True, "restrictPublicBuckets": True}, "p")],
     "BucketPublicAccessBlock p: blockPublicAcls is not set"),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.S3_PUBLIC_ACCESS_BLOCK, {"blockPublicAcls": True, "blockPublicPolicy": False,
                                              "ignorePublicAcls": True, "restrictPublicBuckets": True},
               "b-public-access-block")],
     "BucketPublicAccessBlock b-public-access-block: blockPublicPolicy is not set"),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.S3_PUBLIC_ACCESS_BLOCK, {"blockPublicAcls": False, "blockPublicPolicy": False,
                                              "ignorePublicAcls": True, "restrictPublicBuckets": False},
               "edge-issuer-public-access-block")],
     "BucketPublicAccessBlock edge-issuer-public-access-block: blockPublicAcls is not set"),
    ("backup-buckets-private-and-versioned", [bucket_policy("s3:GetObject", "arn:aws:s3:::b/*")],
     "BucketPolicy p: anyone may s3:GetObject on arn:aws:s3:::b/*: only an issuer's discovery documents may be public"),
    ("backup-buckets-private-and-versioned",
     [bucket_policy(["s3:GetObject", "s3:ListBucket"], "arn:aws:s3:::b/openid/v1/jwks")],
     "anyone may s3:GetObject, s3:ListBucket"),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.S3_PUBLIC_ACCESS_BLOCK, {"blockPublicAcls": True, "blockPublicPolicy": False,
                                              "ignorePublicAcls": True, "restrictPublicBuckets": False},
               "edge-issuer-public-access-block"),
      bucket_policy("s3:GetObject", [f"arn:aws:s3:::b/{d}" for d in (".well-known/openid-configuration",
                                                                      "openid/v1/jwks")])],
     None),
    ("backup-buckets-private-and-versioned",
     [Resource(cloud.GCS_BUCKET, {"uniformBucketLevelAccess": True, "publicAccessPrevention": "enforced",
                                  "versioning": {"enabled": True}, "forceDestroy": False}, "b"),
      Resource(cloud.S3_VERSIONING, {"versioningConfiguration": {"status": "Enabled"}}, "v")], None),
    ("no-kube-apiserver-sidecars", [deployment(container(), container("webhook-server"))],
     "Deployment shoot--dev--web/kube-apiserver runs container webhook-server beside kube-apiserver"),
    ("no-kube-apiserver-sidecars", [static_pod(containers=[container(), container("injector")])],
     "Pod kube-system/kube-apiserver-node-0 runs container injector beside kube-apiserver"),
    ("no-kube-apiserver-sidecars", [deployment(), deployment(container("etcd"), container("backup-restore"))], None),
    ("extension-namespaces-without-borrowed-kubeconfigs",
     [extension_secret({"client-certificate-data": "x", "client-key-data": "y"})],
     "Secret extension-provider-local/garden key kubeconfig is a kubeconfig whose user u (client-certificate-data, "
     "client-key-data) carries credentials of its own"),
    ("extension-namespaces-without-borrowed-kubeconfigs", [extension_secret({"token": "t"})], "user u (token)"),
    ("extension-namespaces-without-borrowed-kubeconfigs",
     [extension_secret({"tokenFile": "/var/run/secrets/gardener.cloud/garden/generic-kubeconfig/token"}),
      extension_secret({"client-key-data": "y"}, namespace="shoot--dev--web")], None),
    ("access-token-lifetime", [access_token(48 * 3600)],
     "access token t of seed-local-1/extension-provider-local has 48h, not a lifetime within 24h"),
    ("access-token-lifetime", [access_token(None)], "has no lifetime"),
    ("access-token-lifetime", [access_token(12 * 3600), access_token(24 * 3600)], None),
]  # fmt: skip
