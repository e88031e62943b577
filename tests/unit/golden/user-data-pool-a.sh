#!/bin/bash
set -o errexit -o nounset -o pipefail
mkdir -p '/var/lib/gardener-node-agent'
echo 'Q0EtMQ==' | base64 -d > '/var/lib/gardener-node-agent/cluster-ca.crt'
chmod 640 '/var/lib/gardener-node-agent/cluster-ca.crt'
mkdir -p '/var/lib/gardener-node-agent'
echo 'YXBpU2VydmVyOgogIGNhRmlsZTogL3Zhci9saWIvZ2FyZGVuZXItbm9kZS1hZ2VudC9jbHVzdGVyLWNhLmNydAogIHNlcnZlcjogaHR0cHM6Ly9hcGkuaW50ZXJuYWwKYXBpVmVyc2lvbjogbm9kZWFnZW50LmNvbmZpZy5nYXJkZW5lci5jbG91ZC92MWFscGhhMQpib290c3RyYXA6CiAga3ViZWxldERhdGFWb2x1bWVTaXplOiAwCmNvbnRyb2xsZXJzOgogIG9wZXJhdGluZ1N5c3RlbUNvbmZpZzoKICAgIGt1YmVybmV0ZXNWZXJzaW9uOiAxLjM0LjMKICAgIHNlY3JldE5hbWU6IGdhcmRlbmVyLW5vZGUtYWdlbnQtcG9vbC1hLWMxYTQyNjhkNDlhMGEwYTIKa2luZDogTm9kZUFnZW50Q29uZmlndXJhdGlvbgo=' | base64 -d > '/var/lib/gardener-node-agent/config-v1.149.3.yaml'
chmod 600 '/var/lib/gardener-node-agent/config-v1.149.3.yaml'
mkdir -p '/var/lib/gardener-node-agent/credentials'
printf '%s' '<<BOOTSTRAP_TOKEN>>' > '/var/lib/gardener-node-agent/credentials/bootstrap-token'
chmod 600 '/var/lib/gardener-node-agent/credentials/bootstrap-token'
mkdir -p '/var/lib/gardener-node-agent'
echo 'IyEvYmluL2Jhc2gKc2V0IC1vIGVycmV4aXQgLW8gbm91bnNldCAtbyBwaXBlZmFpbAppbWFnZT1ldXJvcGUtZG9ja2VyLnBrZy5kZXYvZ2FyZGVuZXItcHJvamVjdC9yZWxlYXNlcy9nYXJkZW5lci9ub2RlLWFnZW50OnYxLjE0OS4zCm1udD0kKG1rdGVtcCAtZCkKdHJhcCAnY3RyIGltYWdlcyB1bm1vdW50ICIkbW50IiA+L2Rldi9udWxsIDI+JjEgfHwgdHJ1ZTsgcm0gLXJmICIkbW50IicgRVhJVAp1bnRpbCBjdHIgaW1hZ2VzIHB1bGwgLS1ob3N0cy1kaXIgL2V0Yy9jb250YWluZXJkL2NlcnRzLmQgIiRpbWFnZSIgPi9kZXYvbnVsbDsgZG8gc2xlZXAgNTsgZG9uZQpjdHIgaW1hZ2VzIG1vdW50ICIkaW1hZ2UiICIkbW50IgppbnN0YWxsIC1EIC1tMDc1NSAiJG1udC9nYXJkZW5lci1ub2RlLWFnZW50IiAvb3B0L2Jpbi9nYXJkZW5lci1ub2RlLWFnZW50CmV4ZWMgL29wdC9iaW4vZ2FyZGVuZXItbm9kZS1hZ2VudCBib290c3RyYXAgLS1jb25maWctZGlyPS92YXIvbGliL2dhcmRlbmVyLW5vZGUtYWdlbnQK' | base64 -d > '/var/lib/gardener-node-agent/init.sh'
chmod 755 '/var/lib/gardener-node-agent/init.sh'
mkdir -p '/var/lib/gardener-node-agent'
printf '%s' '<<MACHINE_NAME>>' > '/var/lib/gardener-node-agent/machine-name'
chmod 600 '/var/lib/gardener-node-agent/machine-name'
echo 'W1VuaXRdCkRlc2NyaXB0aW9uPURvd25sb2FkcyB0aGUgZ2FyZGVuZXItbm9kZS1hZ2VudCBiaW5hcnkgYW5kIHN0YXJ0cyBpdHMgYm9vdHN0cmFwCkFmdGVyPW5ldHdvcmstb25saW5lLnRhcmdldApXYW50cz1uZXR3b3JrLW9ubGluZS50YXJnZXQKW1NlcnZpY2VdClR5cGU9b25lc2hvdApSZXN0YXJ0PW9uLWZhaWx1cmUKUmVzdGFydFNlYz01CkV4ZWNTdGFydD0vdmFyL2xpYi9nYXJkZW5lci1ub2RlLWFnZW50L2luaXQuc2gKW0luc3RhbGxdCldhbnRlZEJ5PW11bHRpLXVzZXIudGFyZ2V0Cg==' | base64 -d > '/etc/systemd/system/gardener-node-init.service'
systemctl daemon-reload
systemctl enable --now 'gardener-node-init.service' --no-block
