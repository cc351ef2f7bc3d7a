# mcpbind: every target CI runs is here. `make help` lists them.
PY ?= python
export MYPYPATH := runtime:generated:codegen

# The supported Pythons, oldest first (found with pyenv). CI runs the test suite on each and
# everything else (gen-check, lint, typecheck, conformance, benchmark smoke tests, demo) once,
# on the newest. A new interpreter is one more entry here (and a classifier in pyproject.toml).
PYTHONS := 3.11 3.12 3.13
NEWEST := $(lastword $(PYTHONS))
OLDER := $(filter-out $(NEWEST),$(PYTHONS))

.PHONY: help setup setup-all demo schema gen gen-check lint typecheck typecheck-installed test check ci docs dist bench-codec bench-rt bench-http bench-tasks bench-cold bench-cold-wheel bench-mem bench-scale bench-inlines bench-gateway bench-cluster conformance pythons test-older fuzz soak soak-cluster

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

setup:  ## install mcpbind (editable) with the generator, test tools, doc tools and benchmark peers
	$(PY) -m pip install -q -e '.[dev,peers,docs]'

# Everything the suite needs besides `setup`: with it done the suite skips only tests for other
# Pythons (its last line names what it skipped). redis-server, haproxy and chromium are Debian packages
# (as root).
setup-all: setup bench/rt/peers/ts/node_modules bench/http/loadgen/node_modules bench/http/peers/ts/node_modules tests/peers/server-everything/node_modules tests/peers/server-filesystem/node_modules tests/peers/inspector/node_modules/.installed conformance/node_modules/.installed tests/auth/oidc/node_modules/.installed  ## `setup`, the npm peers, the MCP Inspector, the conformance suite, oidc-provider, redis-server, haproxy and chromium
	@for program in redis-server haproxy chromium; do \
	  command -v $$program >/dev/null || { apt-get update -qq && apt-get install -y -qq $$program; } \
	  || { echo "$$program could not be installed (apt-get, as root): the tests that need it skip" >&2; exit 1; }; \
	done

demo:  ## the main job: a Host over the bundled example servers (notes over stdio, files over HTTP)
	$(PY) -m examples.host_demo

schema:  ## copy (or download) the pinned schemas and examples, checking sha256
	$(PY) -m mcpbind_codegen sync-schemas

gen: schema  ## regenerate generated/ from the pinned schemas
	$(PY) -m mcpbind_codegen generate-all

gen-check: schema  ## regenerate in memory and fail on any difference from generated/
	$(PY) -m mcpbind_codegen check

lint:  ## ruff lint (all code) and format check (hand-written code)
	ruff check codegen generated runtime tests bench examples conformance docs/hooks
	ruff format --check codegen runtime tests bench examples conformance docs/hooks generated/mcpbind_types/_common.py generated/mcpbind_types/_lazy.py

typecheck:  ## mypy --strict over the three layers and the examples
	mypy --strict -p mcpbind_codegen -p mcpbind_types -p mcpbind -p examples
	mypy --strict conformance/everything_server.py conformance/everything_client.py conformance/run.py conformance/stateless_tools.py conformance/task_tools.py

tests/typing/installed/node_modules/.installed: tests/typing/installed/package.json tests/typing/installed/package-lock.json
	npm ci --prefix tests/typing/installed --no-audit --no-fund
	touch $@

typecheck-installed: tests/typing/installed/node_modules/.installed  ## sdist+wheel and an editable install in fresh venvs: a user's typed script passes mypy --strict and pyright
	$(PY) tests/typing/installed/run.py

# pytest-xdist workers: the suite mostly waits on subprocesses and servers, so more workers
# than cores pay (2 cores, nice -n 10, load average 3-10 from other work: -n 2 (= auto) 4:04,
# -n 4 3:14, -n 8 4:48; serially 8:34 with the benchmark smoke tests). --dist loadscope keeps a
# module (its module-scoped servers and benchmark runs) on one worker.
PYTEST_WORKERS ?= 4
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist loadscope

test: schema  ## the test suite, warnings as errors, in parallel (PYTEST_WORKERS, default 4)
	$(PY) -m pytest -W error -q $(PYTEST_PARALLEL)

docs:  ## the documentation site (mkdocs.yml, docs/) into site/, warnings (broken links, references) as errors
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

dist:  ## sdist and wheel into dist/, checked with twine (what .github/workflows/release.yml publishes)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

pythons:  ## print the supported Pythons (PYTHONS), oldest first
	@echo $(PYTHONS)

# pyenv's newest installed X.Y (`pyenv latest`), never whatever `pythonX.Y` is on PATH.
PYENV_PYTHON = "$$(pyenv root)/versions/$$(pyenv latest $(1))/bin/python"

.venv-%/.installed: pyproject.toml  # a venv per older Python, set up as `make setup` does
	@pyenv latest $* >/dev/null || { echo "Python $* is not installed by pyenv" >&2; exit 1; }
	test -x .venv-$*/bin/python || $(call PYENV_PYTHON,$*) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q --upgrade pip
	$(MAKE) --no-print-directory setup PY=.venv-$*/bin/python
	touch $@

# The benchmark smoke tests and the documentation site's tests run once, on the newest Python
# (make check): what they check is the benchmark harness and its peers, and the site, not the
# interpreter.
test-older: schema $(foreach v,$(OLDER),.venv-$(v)/.installed)  ## the suite on every older Python of PYTHONS, one after another (TESTS=path narrows it)
	@status=0; for v in $(OLDER); do \
	  echo "== Python $$v: $$(.venv-$$v/bin/python --version)"; \
	  PATH="$$PWD/.venv-$$v/bin:$$PATH" .venv-$$v/bin/python -m pytest -W error -q \
	    -p no:cacheprovider $(PYTEST_PARALLEL) --ignore=tests/bench --ignore=tests/docs $(TESTS) || status=1; \
	done; exit $$status

check: gen-check lint typecheck test conformance  ## the README's test command; CI runs it on the newest Python

bench-codec: schema  ## codec benchmark: mcpbind vs the official Python SDK, same process
	$(PY) bench/bench_codec.py

bench-rt: bench/rt/peers/ts/node_modules bench/http/loadgen/node_modules  ## round trips: mcpbind vs official Python SDK vs TypeScript SDK vs raw floor
	$(PY) bench/rt/run.py

bench/rt/peers/ts/node_modules: bench/rt/peers/ts/package-lock.json
	npm ci --prefix bench/rt/peers/ts --no-audit --no-fund

bench-tasks:  ## task throughput per store (memory, SQLite, Redis when installed), both eras
	$(PY) bench/tasks/bench_tasks.py

bench-http: bench/http/loadgen/node_modules bench/http/peers/ts/node_modules  ## Streamable HTTP: mcpbind vs official Python SDK vs TypeScript SDK, same load generator
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/http/run.py

bench-cluster: bench/http/loadgen/node_modules  ## 1, 2, 4 workers behind haproxy round-robin: mcpbind (2026-07-28, sessions through Redis) vs the official SDK's multi-worker setup; req/s, p99, CPU and Redis ops per request
	$(PY) bench/cluster/run.py $(BENCH_CLUSTER_ARGS)

bench-inlines:  ## instructions per request with each hand-inlined copy of a helper and with the call instead (callgrind)
	$(PY) bench/inlines/run.py

bench-gateway:  ## the Host as a gateway: tools/call echo through `mcpbind host --serve` against the same call direct (stdio, HTTP), with callgrind instructions per call
	$(PY) bench/gateway/run.py --callgrind

bench-cold:  ## cold start: import and `mcpbind ls` as whole processes, vs the official SDK
	$(PY) bench/coldstart.py

bench-cold-wheel:  ## cold start of mcpbind as users install it: its wheel in a fresh venv (.venv-wheel)
	test -x .venv-wheel/bin/python || $(PY) -m venv .venv-wheel
	.venv-wheel/bin/python -m pip install -q . && .venv-wheel/bin/python -m pip install -q --force-reinstall --no-deps .
	$(PY) bench/coldstart.py --python .venv-wheel/bin/python

bench-mem: bench/http/loadgen/node_modules bench/http/peers/ts/node_modules  ## RSS of 10,000 idle Streamable HTTP sessions: mcpbind vs official Python SDK vs TypeScript SDK
	$(PY) bench/memory_sessions.py

bench-scale:  ## cost against size (tools/list, resources/read, Host over N servers), plotted to bench/plots/scale.png
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/scale.py --plot bench/plots/scale.png

bench/http/loadgen/node_modules: bench/http/loadgen/package-lock.json
	npm ci --prefix bench/http/loadgen --no-audit --no-fund

bench/http/peers/ts/node_modules: bench/http/peers/ts/package-lock.json
	npm ci --prefix bench/http/peers/ts --no-audit --no-fund

CONFORMANCE_SPEC ?= 2025-11-25,2026-07-28
# The client side also runs the 2025-03-26 back-compat auth scenarios and the extensions.
CONFORMANCE_CLIENT_SPEC ?= $(CONFORMANCE_SPEC),2025-03-26,extension

# oidc-provider, the real authorization server of the end-to-end auth tests (tests/auth/e2e).
tests/auth/oidc/node_modules/.installed: tests/auth/oidc/package.json tests/auth/oidc/package-lock.json
	npm ci --prefix tests/auth/oidc --no-audit --no-fund
	touch $@

tests/peers/server-everything/node_modules: tests/peers/server-everything/package.json tests/peers/server-everything/package-lock.json  ## the reference server-everything (tasks interop tests)
	npm ci --prefix tests/peers/server-everything --no-audit --no-fund

tests/peers/server-filesystem/node_modules: tests/peers/server-filesystem/package.json tests/peers/server-filesystem/package-lock.json  ## the reference server-filesystem (an upstream of the gateway interop tests)
	npm ci --prefix tests/peers/server-filesystem --no-audit --no-fund

# The MCP Inspector, pinned, with a Node.js >= 22.19 from npm itself (tests/cli/test_dev.py drives
# its CLI mode through `mcpbind dev`).
tests/peers/inspector/node_modules/.installed: tests/peers/inspector/package.json tests/peers/inspector/package-lock.json
	npm ci --prefix tests/peers/inspector --no-audit --no-fund
	touch $@

# The suite needs Node.js >= 22, whatever Node the machine has: the pinned Node.js 24 from npm
# (conformance/node) is installed first, and npm installs the suite running on it, so the
# packages' engine ranges are checked against the Node that runs them (no EBADENGINE).
CONFORMANCE_NODE_BIN := $(CURDIR)/conformance/node/node_modules/.bin

conformance/node/node_modules/.installed: conformance/node/package.json conformance/node/package-lock.json
	npm ci --prefix conformance/node --no-audit --no-fund
	touch $@

conformance/node_modules/.installed: conformance/package.json conformance/package-lock.json conformance/node/node_modules/.installed
	PATH="$(CONFORMANCE_NODE_BIN):$$PATH" npm ci --prefix conformance --no-audit --no-fund
	touch $@

# The two sides are independent processes and run at once; the server side's report (kept in
# a file meanwhile) is printed after the client side's.
conformance: conformance/node_modules/.installed  ## the official MCP conformance suite, server and client sides
	@out=$$(mktemp); \
	$(PY) conformance/run.py server --spec-version $(CONFORMANCE_SPEC) >"$$out" 2>&1 & server=$$!; \
	$(PY) conformance/run.py client --command "$(PY) conformance/everything_client.py" \
	  --spec-version $(CONFORMANCE_CLIENT_SPEC); c=$$?; \
	wait $$server; s=$$?; cat "$$out"; rm -f "$$out"; exit $$(( s || c ))

FUZZ_SECONDS ?= 600
# atheris 3.0.0 has wheels for CPython 3.11 only: the fuzzer runs in its own venv on pyenv's
# 3.11 (FUZZ_PY=... to use another interpreter that has atheris).
FUZZ_PY ?= .venv-fuzz/bin/python

.venv-fuzz/.installed: pyproject.toml
	@pyenv latest 3.11 >/dev/null || { echo "make fuzz needs Python 3.11 (pyenv install 3.11)" >&2; exit 1; }
	test -x .venv-fuzz/bin/python || $(call PYENV_PYTHON,3.11) -m venv .venv-fuzz
	.venv-fuzz/bin/python -m pip install -q -e '.[dev,fuzz]'
	touch $@

fuzz: $(if $(filter .venv-fuzz/bin/python,$(FUZZ_PY)),.venv-fuzz/.installed)  ## coverage-guided fuzzing (atheris) of the receive path: both eras, the ASGI app, legacy HTTP+SSE, auth, tasks
	$(FUZZ_PY) -c 'import atheris' 2>/dev/null || $(FUZZ_PY) -m pip install -q 'atheris==3.0.0'
	nice $(FUZZ_PY) tests/fuzz/run.py --seconds $(FUZZ_SECONDS)

SOAK_SECONDS ?= 1800
SOAK_CLIENTS ?= 50
SOAK_ARGS ?=

soak:  ## soak benchmark: one uvicorn worker, SOAK_CLIENTS clients (one process per core) for SOAK_SECONDS; RSS drift, errors, p99, CPU
	$(PY) bench/soak/run.py --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS) $(SOAK_ARGS)

SOAK_WORKERS ?= 4

soak-cluster: SOAK_SECONDS = 600
soak-cluster:  ## soak a cluster: SOAK_WORKERS workers on redis-server behind haproxy round-robin, SOAK_CLIENTS clients for SOAK_SECONDS (600); per-worker RSS and Redis memory drift
	$(PY) bench/soak/run.py --workers $(SOAK_WORKERS) --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS) $(SOAK_ARGS)
