#!/bin/bash
set -o errexit -o nounset -o pipefail
ROOT="${ROOT:-}"
extract() {
  local mnt
  mnt=$(mktemp -d)
  until ctr images pull --hosts-dir /etc/containerd/certs.d "$1" >/dev/null; do sleep 5; done
  ctr images mount "$1" "$mnt" >/dev/null
  install -D -m0755 "$mnt/$2" "$3"
  ctr images unmount "$mnt" >/dev/null
  rmdir "$mnt"
}
mkdir -p "$ROOT"/etc/kubernetes/manifests
echo 'a2luZDogUG9kCg==' | base64 -d > "$ROOT"/etc/kubernetes/manifests/etcd-main.yaml
chmod 600 "$ROOT"/etc/kubernetes/manifests/etcd-main.yaml
mkdir -p "$ROOT"/etc/sysctl.d
echo 'ZnMuaW5vdGlmeS5tYXhfdXNlcl93YXRjaGVzID0gNTI0Mjg4Cm5ldC5pcHY0LmlwX2ZvcndhcmQgPSAxCnZtLm1heF9tYXBfY291bnQgPSAxMzUyMTc3MjgK' | base64 -d > "$ROOT"/etc/sysctl.d/99-k8s-general.conf
chmod 644 "$ROOT"/etc/sysctl.d/99-k8s-general.conf
mkdir -p "$ROOT"/etc/systemd/journald.conf.d
echo 'W0pvdXJuYWxdCk1heEZpbGVTZWM9MjRoCk1heFJldGVudGlvblNlYz0xNGRheQo=' | base64 -d > "$ROOT"/etc/systemd/journald.conf.d/gardener.conf
chmod 644 "$ROOT"/etc/systemd/journald.conf.d/gardener.conf
mkdir -p "$ROOT"/opt/bin
extract europe-docker.pkg.dev/gardener-project/releases/gardener/node-agent:v1.149.3 gardener-node-agent "$ROOT"/opt/bin/gardener-node-agent
chmod 755 "$ROOT"/opt/bin/gardener-node-agent
mkdir -p "$ROOT"/opt/bin
extract europe-docker.pkg.dev/gardener-project/releases/hyperkube:v1.34.3 kubelet "$ROOT"/opt/bin/kubelet
chmod 755 "$ROOT"/opt/bin/kubelet
mkdir -p "$ROOT"/var/lib/ca-certificates-local
echo '' | base64 -d > "$ROOT"/var/lib/ca-certificates-local/ROOTcerts.crt
chmod 644 "$ROOT"/var/lib/ca-certificates-local/ROOTcerts.crt
mkdir -p "$ROOT"/var/lib/gardener-node-agent
echo 'Q0EtMQ==' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/cluster-ca.crt
chmod 640 "$ROOT"/var/lib/gardener-node-agent/cluster-ca.crt
mkdir -p "$ROOT"/var/lib/gardener-node-agent
echo 'YXBpU2VydmVyOgogIGNhRmlsZTogL3Zhci9saWIvZ2FyZGVuZXItbm9kZS1hZ2VudC9jbHVzdGVyLWNhLmNydAogIHNlcnZlcjogaHR0cHM6Ly9hcGkuaW50ZXJuYWwKYXBpVmVyc2lvbjogbm9kZWFnZW50LmNvbmZpZy5nYXJkZW5lci5jbG91ZC92MWFscGhhMQpjb250cm9sbGVyczoKICBvcGVyYXRpbmdTeXN0ZW1Db25maWc6CiAgICBrdWJlcm5ldGVzVmVyc2lvbjogMS4zNC4zCiAgICBzZWNyZXROYW1lOiBnYXJkZW5lci1ub2RlLWFnZW50LXBvb2wtYS1jMWE0MjY4ZDQ5YTBhMGEyCmtpbmQ6IE5vZGVBZ2VudENvbmZpZ3VyYXRpb24K' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/config-v1.149.3.yaml
chmod 600 "$ROOT"/var/lib/gardener-node-agent/config-v1.149.3.yaml
mkdir -p "$ROOT"/var/lib/kubelet
echo 'Q0xJRU5ULUNBLTE=' | base64 -d > "$ROOT"/var/lib/kubelet/ca.crt
chmod 644 "$ROOT"/var/lib/kubelet/ca.crt
mkdir -p "$ROOT"/var/lib/kubelet/config
echo 'YXBpVmVyc2lvbjoga3ViZWxldC5jb25maWcuazhzLmlvL3YxYmV0YTEKYXV0aGVudGljYXRpb246CiAgd2ViaG9vazoKICAgIGVuYWJsZWQ6IHRydWUKICB4NTA5OgogICAgY2xpZW50Q0FGaWxlOiAvdmFyL2xpYi9rdWJlbGV0L2NhLmNydAphdXRob3JpemF0aW9uOgogIG1vZGU6IFdlYmhvb2sKY2dyb3VwRHJpdmVyOiBzeXN0ZW1kCmNsdXN0ZXJETlM6Ci0gMTAwLjY0LjAuMTAKY2x1c3RlckRvbWFpbjogY2x1c3Rlci5sb2NhbApldmljdGlvbkhhcmQ6CiAgbWVtb3J5LmF2YWlsYWJsZTogMTAwTWkKa2luZDogS3ViZWxldENvbmZpZ3VyYXRpb24Ka3ViZVJlc2VydmVkOgogIGNwdTogODBtCiAgbWVtb3J5OiAxR2kKbWF4UG9kczogMTEwCnByb3RlY3RLZXJuZWxEZWZhdWx0czogdHJ1ZQpyb3RhdGVDZXJ0aWZpY2F0ZXM6IHRydWUK' | base64 -d > "$ROOT"/var/lib/kubelet/config/kubelet
chmod 600 "$ROOT"/var/lib/kubelet/config/kubelet
mkdir -p "$ROOT"/var/lib/kubelet/pki
echo 'Q0VSVApLRVkK' | base64 -d > "$ROOT"/var/lib/kubelet/pki/kubelet-client-current.pem
chmod 600 "$ROOT"/var/lib/kubelet/pki/kubelet-client-current.pem
mkdir -p "$ROOT"/var/lib/kubelet
echo 'YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCmNsdXN0ZXJzOgotIG5hbWU6IGRlZmF1bHQKICBjbHVzdGVyOgogICAgc2VydmVyOiBodHRwczovLzEyNy4wLjAuMQogICAgY2VydGlmaWNhdGUtYXV0aG9yaXR5LWRhdGE6IFEwRUsKdXNlcnM6Ci0gbmFtZTogZGVmYXVsdAogIHVzZXI6CiAgICBjbGllbnQtY2VydGlmaWNhdGU6IC92YXIvbGliL2t1YmVsZXQvcGtpL2t1YmVsZXQtY2xpZW50LWN1cnJlbnQucGVtCiAgICBjbGllbnQta2V5OiAvdmFyL2xpYi9rdWJlbGV0L3BraS9rdWJlbGV0LWNsaWVudC1jdXJyZW50LnBlbQpjb250ZXh0czoKLSBuYW1lOiBkZWZhdWx0CiAgY29udGV4dDoKICAgIGNsdXN0ZXI6IGRlZmF1bHQKICAgIHVzZXI6IGRlZmF1bHQKY3VycmVudC1jb250ZXh0OiBkZWZhdWx0Cg==' | base64 -d > "$ROOT"/var/lib/kubelet/kubeconfig-real
chmod 600 "$ROOT"/var/lib/kubelet/kubeconfig-real
mkdir -p "$ROOT"/var/lib/kubelet
echo 'S1VCRUxFVF9FWFRSQV9BUkdTPS0taG9zdG5hbWUtb3ZlcnJpZGU9c2hvb3QtLW9wcy0tcm9vdC1jcC16MS0wCg==' | base64 -d > "$ROOT"/var/lib/kubelet/extra_args
chmod 600 "$ROOT"/var/lib/kubelet/extra_args
mkdir -p "$ROOT"/var/lib/gardener-node-agent
echo 'Q0EtMQ==' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/cluster-ca.crt
chmod 640 "$ROOT"/var/lib/gardener-node-agent/cluster-ca.crt
mkdir -p "$ROOT"/var/lib/gardener-node-agent
echo 'YXBpU2VydmVyOgogIGNhRmlsZTogL3Zhci9saWIvZ2FyZGVuZXItbm9kZS1hZ2VudC9jbHVzdGVyLWNhLmNydAogIHNlcnZlcjogaHR0cHM6Ly9hcGkuaW50ZXJuYWwKYXBpVmVyc2lvbjogbm9kZWFnZW50LmNvbmZpZy5nYXJkZW5lci5jbG91ZC92MWFscGhhMQpib290c3RyYXA6CiAga3ViZWxldERhdGFWb2x1bWVTaXplOiAwCmNvbnRyb2xsZXJzOgogIG9wZXJhdGluZ1N5c3RlbUNvbmZpZzoKICAgIGt1YmVybmV0ZXNWZXJzaW9uOiAxLjM0LjMKICAgIHNlY3JldE5hbWU6IGdhcmRlbmVyLW5vZGUtYWdlbnQtcG9vbC1hLWMxYTQyNjhkNDlhMGEwYTIKa2luZDogTm9kZUFnZW50Q29uZmlndXJhdGlvbgo=' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/config-v1.149.3.yaml
chmod 600 "$ROOT"/var/lib/gardener-node-agent/config-v1.149.3.yaml
mkdir -p "$ROOT"/var/lib/gardener-node-agent/credentials
echo 'YWJjZGVmLjAxMjM0NTY3ODlhYmNkZWY=' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/credentials/bootstrap-token
chmod 600 "$ROOT"/var/lib/gardener-node-agent/credentials/bootstrap-token
mkdir -p "$ROOT"/var/lib/gardener-node-agent
echo 'IyEvYmluL2Jhc2gKc2V0IC1vIGVycmV4aXQgLW8gbm91bnNldCAtbyBwaXBlZmFpbAppbWFnZT1ldXJvcGUtZG9ja2VyLnBrZy5kZXYvZ2FyZGVuZXItcHJvamVjdC9yZWxlYXNlcy9nYXJkZW5lci9ub2RlLWFnZW50OnYxLjE0OS4zCm1udD0kKG1rdGVtcCAtZCkKdHJhcCAnY3RyIGltYWdlcyB1bm1vdW50ICIkbW50IiA+L2Rldi9udWxsIDI+JjEgfHwgdHJ1ZTsgcm0gLXJmICIkbW50IicgRVhJVAp1bnRpbCBjdHIgaW1hZ2VzIHB1bGwgLS1ob3N0cy1kaXIgL2V0Yy9jb250YWluZXJkL2NlcnRzLmQgIiRpbWFnZSIgPi9kZXYvbnVsbDsgZG8gc2xlZXAgNTsgZG9uZQpjdHIgaW1hZ2VzIG1vdW50ICIkaW1hZ2UiICIkbW50IgppbnN0YWxsIC1EIC1tMDc1NSAiJG1udC9nYXJkZW5lci1ub2RlLWFnZW50IiAvb3B0L2Jpbi9nYXJkZW5lci1ub2RlLWFnZW50CmV4ZWMgL29wdC9iaW4vZ2FyZGVuZXItbm9kZS1hZ2VudCBib290c3RyYXAgLS1jb25maWctZGlyPS92YXIvbGliL2dhcmRlbmVyLW5vZGUtYWdlbnQK' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/init.sh
chmod 755 "$ROOT"/var/lib/gardener-node-agent/init.sh
mkdir -p "$ROOT"/var/lib/gardener-node-agent
echo 'c2hvb3QtLW9wcy0tcm9vdC1jcC16MS0w' | base64 -d > "$ROOT"/var/lib/gardener-node-agent/machine-name
chmod 600 "$ROOT"/var/lib/gardener-node-agent/machine-name
mkdir -p "$ROOT"/etc/systemd/system "$ROOT"/var/lib/arbor-first-boot
echo 'W1VuaXRdCkRlc2NyaXB0aW9uPUdhcmRlbmVyIE5vZGUgQWdlbnQKQWZ0ZXI9bmV0d29yay1vbmxpbmUudGFyZ2V0CltJbnN0YWxsXQpXYW50ZWRCeT1tdWx0aS11c2VyLnRhcmdldApbU2VydmljZV0KTGltaXRNRU1MT0NLPWluZmluaXR5CkxpbWl0Tk9GSUxFPTEwNDg1NzYKUmVzdGFydD1hbHdheXMKUmVzdGFydFNlYz01CkV4ZWNTdGFydD0vb3B0L2Jpbi9nYXJkZW5lci1ub2RlLWFnZW50IC0tY29uZmlnLWRpcj0vdmFyL2xpYi9nYXJkZW5lci1ub2RlLWFnZW50Cg==' | base64 -d > "$ROOT"/etc/systemd/system/gardener-node-agent.service
echo 'W1VuaXRdCkRlc2NyaXB0aW9uPWt1YmVsZXQgZGFlbW9uCkFmdGVyPWNvbnRhaW5lcmQuc2VydmljZQpbSW5zdGFsbF0KV2FudGVkQnk9bXVsdGktdXNlci50YXJnZXQKW1NlcnZpY2VdClJlc3RhcnQ9YWx3YXlzClJlc3RhcnRTZWM9NQpFbnZpcm9ubWVudEZpbGU9L2V0Yy9lbnZpcm9ubWVudApFbnZpcm9ubWVudEZpbGU9LS92YXIvbGliL2t1YmVsZXQvZXh0cmFfYXJncwpFeGVjU3RhcnQ9L29wdC9iaW4va3ViZWxldCAtLWNvbmZpZz0vdmFyL2xpYi9rdWJlbGV0L2NvbmZpZy9rdWJlbGV0IC0ta3ViZWNvbmZpZz0vdmFyL2xpYi9rdWJlbGV0L2t1YmVjb25maWctcmVhbCAtLWJvb3RzdHJhcC1rdWJlY29uZmlnPS92YXIvbGliL2t1YmVsZXQva3ViZWNvbmZpZy1ib290c3RyYXAgLS1ub2RlLWxhYmVscz13b3JrZXIuZ2FyZGVuZXIuY2xvdWQva3ViZXJuZXRlcy12ZXJzaW9uPTEuMzQuMyAkS1VCRUxFVF9FWFRSQV9BUkdTCg==' | base64 -d > "$ROOT"/etc/systemd/system/kubelet.service
echo 'W1VuaXRdCkRlc2NyaXB0aW9uPURvd25sb2FkcyB0aGUgZ2FyZGVuZXItbm9kZS1hZ2VudCBiaW5hcnkgYW5kIHN0YXJ0cyBpdHMgYm9vdHN0cmFwCkFmdGVyPW5ldHdvcmstb25saW5lLnRhcmdldApXYW50cz1uZXR3b3JrLW9ubGluZS50YXJnZXQKW1NlcnZpY2VdClR5cGU9b25lc2hvdApSZXN0YXJ0PW9uLWZhaWx1cmUKUmVzdGFydFNlYz01CkV4ZWNTdGFydD0vdmFyL2xpYi9nYXJkZW5lci1ub2RlLWFnZW50L2luaXQuc2gKW0luc3RhbGxdCldhbnRlZEJ5PW11bHRpLXVzZXIudGFyZ2V0Cg==' | base64 -d > "$ROOT"/etc/systemd/system/gardener-node-init.service
systemctl daemon-reload
systemctl enable --now containerd.service --no-block
systemctl enable --now kubelet.service --no-block
systemctl enable --now systemd-journald.service --no-block
systemctl enable --now systemd-sysctl.service --no-block
systemctl enable --now gardener-node-init.service --no-block
touch "$ROOT"/var/lib/arbor-first-boot/done
