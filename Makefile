# arbor: `make up` runs the local landscape, `make test` runs every test. Both set everything up first.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
STACK ?= local
# hack/env.sh reads the stack: plugin acquisition stays off for the local stack only.
ENV := export ARBOR_STACK=$(STACK) && source hack/env.sh &&
PYTEST_FLAGS ?=
# The integration tests are CPU-bound in the engine, the programs and the API servers: workers share the cores
# (bench/README.md, two test workers). `--dist loadfile` keeps each module on one worker, so a module's own stack
# is made once and its tests run in order; each worker converges its own shared local stack. Modules start longest
# first (tests/conftest.py), not by xdist's count of tests per module, which started the longest ones last.
WORKERS := -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder
# The policy pack `make preview` runs (POLICY_PACK= for none), and a --policy-pack-config file that overrides
# policies/config.json's levels and settings (policies/README.md).
POLICY_PACK ?= policies
POLICY_CONFIG ?=
# Where `make preview` writes its files.
OUT ?= out

.PHONY: help setup venv tools state up backup down preview env lint typecheck unit integration test bench fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup: venv tools state ## virtualenv, engine and local runtime, state backend

venv: .venv/.installed ## the Python virtualenv from requirements.txt
.venv/.installed: requirements.txt
	@start=$$SECONDS; python3 -m venv .venv && .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt \
	  && touch $@ && printf '%-26s %-40s %s\n' venv "$$(.venv/bin/python --version)" "ready ($$((SECONDS - start))s)"

tools: ## build or reuse pulumi, plugins, kube-apiserver & co, etcd, kwok; fetch the aws and gcp plugins (hack/tools.sh)
	@hack/tools.sh

state: tools ## the file state backend and the local stack
	@$(ENV) dir=$${PULUMI_BACKEND_URL#file://} && mkdir -p "$${dir%%[?]*}" && \
	  pulumi stack select --create --secrets-provider passphrase $(STACK) >/dev/null

up: setup ## converge the local landscape (its seed stacks too, when sharded) and print how to reach it
	@$(ENV) hack/up.sh $(STACK)

backup: setup ## converge as `up` does, taking a full snapshot of every local shoot's etcd now (docs/backups.md)
	@$(ENV) ARBOR_BACKUP_REQUEST=$$(date -u +%Y%m%dT%H%M%S.%N) hack/up.sh $(STACK)

down: ## destroy the local landscape, protected clusters and keys included; no cluster or process is left
	@# A sharded landscape's seed stacks go first (docs/shards.md); they stay, empty, with their config files.
	@$(ENV) if [ -x .bin/pulumi ] && pulumi stack ls --json 2>/dev/null | grep -q '"name": "$(STACK)"'; then \
	  stacks=$(STACK); [ -x .venv/bin/python ] && stacks=$$(.venv/bin/python hack/shards.py stacks $(STACK) | tac); \
	  for s in $$stacks; do pulumi stack ls --json | grep -q "\"name\": \"$$s\"" || continue; \
	    python3 hack/recover.py $$s && \
	    pulumi destroy --stack $$s --yes --skip-preview --suppress-progress --ignore-protect; done; fi
	@hack/local-down.sh

preview: setup ## out/preview.md (and .json): the change per stack and layer and the policy pack's findings, for a PR
	@mkdir -p $(OUT)
	@$(ENV) hack/preview.sh $(STACK) $(OUT) "$(POLICY_PACK)" "$(POLICY_CONFIG)"

kubeconfig: venv ## a shoot's admin kubeconfig, issued now (SHOOT=<project>/<shoot>, STACK=...; Gardener's shoots/adminkubeconfig)
	@$(ENV) .venv/bin/python hack/admin_kubeconfig.py "$(SHOOT)" --stack $(STACK)

env: ## shell exports for the tools and the local stack (or STACK=...): eval "$(make -s env)"
	@ARBOR_STACK=$(STACK) hack/print-env.sh

lint: venv ## ruff, and the tiers of docs/ARCHITECTURE.md (lint-imports)
	@.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/lint-imports --no-cache

typecheck: venv ## mypy
	@.venv/bin/mypy

unit: venv ## unit tests (Pulumi mocks, golden files, tables)
	@$(ENV) .venv/bin/pytest tests/unit $(PYTEST_FLAGS)

integration: setup ## integration tests: the local stack with the real engine
	@$(ENV) .venv/bin/pytest tests/integration $(WORKERS) $(PYTEST_FLAGS)

# Every `make test` log ends with its 25 slowest tests; PYTEST_FLAGS come last, so `--durations=N` there wins.
test: setup lint typecheck ## everything: lint, types, unit and integration tests
	@$(ENV) .venv/bin/pytest tests --durations=25 $(WORKERS) $(PYTEST_FLAGS)

# The engine part runs stacks of up to N shoots from nothing; a one-stack `up` is stopped after 15 minutes, the target
# (a lower bound in the table), and larger one stacks are then not run; seed stacks of 50 shoots two at a time: about
# two hours in all on two cores. SHOOTS="10 50" limits it.
bench: setup ## benchmarks at N = 10, 100, 500 shoots: registration under mocks, the engine one stack vs shards (bench/README.md)
	@.venv/bin/python bench/scale.py --readme $(if $(SHOOTS),--shoots $(SHOOTS))
	@$(ENV) .venv/bin/python bench/engine_scale.py --readme $(if $(SHOOTS),--shoots $(SHOOTS))

fuzz: venv ## the spec fuzzer: 10,000 generated landscapes, crashes and unclear messages (bench/README.md)
	@.venv/bin/python bench/fuzz.py --readme

clean: down ## remove this clone's state and virtualenv (the tool cache stays)
	rm -rf .venv .bin .state .kwok out
