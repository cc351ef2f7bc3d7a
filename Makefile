# mcpbind: every target CI runs is here. `make help` lists them.
PY ?= python
export MYPYPATH := runtime:generated:codegen

.PHONY: help setup demo schema gen gen-check lint typecheck typecheck-installed test check ci bench-codec bench-rt bench-http bench-cold bench-mem bench-scale conformance

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

setup:  ## install mcpbind (editable) with the generator, test tools and benchmark peers
	$(PY) -m pip install -q -e '.[dev,peers]'

demo:  ## the main job: a Host over the bundled example servers (notes over stdio, files over HTTP)
	$(PY) -m examples.host_demo

schema:  ## copy (or download) the pinned schemas and examples, checking sha256
	$(PY) -m mcpbind_codegen sync-schemas

gen: schema  ## regenerate generated/ from the pinned schemas
	$(PY) -m mcpbind_codegen generate-all

gen-check: schema  ## regenerate in memory and fail on any difference from generated/
	$(PY) -m mcpbind_codegen check

lint:  ## ruff lint (all code) and format check (hand-written code)
	ruff check codegen generated runtime tests bench examples conformance
	ruff format --check codegen runtime tests bench examples conformance

typecheck:  ## mypy --strict over the three layers and the examples
	mypy --strict -p mcpbind_codegen -p mcpbind_types -p mcpbind -p examples
	mypy --strict conformance/everything_server.py conformance/everything_client.py conformance/run.py conformance/stateless_tools.py

tests/typing/installed/node_modules/.installed: tests/typing/installed/package.json tests/typing/installed/package-lock.json
	npm ci --prefix tests/typing/installed --no-audit --no-fund
	touch $@

typecheck-installed: tests/typing/installed/node_modules/.installed  ## sdist+wheel and an editable install in fresh venvs: a user's typed script passes mypy --strict and pyright
	$(PY) tests/typing/installed/run.py

test: schema  ## the test suite, warnings as errors
	$(PY) -m pytest -W error -q

check: gen-check lint typecheck test conformance  ## what CI runs: the README's test command

bench-codec: schema  ## codec benchmark: mcpbind vs the official Python SDK, same process
	$(PY) bench/bench_codec.py

bench-rt: bench/rt/peers/ts/node_modules  ## round trips: mcpbind vs official Python SDK vs TypeScript SDK vs raw floor
	$(PY) bench/rt/run.py

bench/rt/peers/ts/node_modules: bench/rt/peers/ts/package-lock.json
	npm ci --prefix bench/rt/peers/ts --no-audit --no-fund

bench-http: bench/http/loadgen/node_modules bench/http/peers/ts/node_modules  ## Streamable HTTP: mcpbind vs official Python SDK vs TypeScript SDK, same load generator
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/http/run.py

bench-cold:  ## cold start: import and `mcpbind ls` as whole processes, vs the official SDK
	$(PY) bench/coldstart.py

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

conformance/node_modules/.installed: conformance/package.json conformance/package-lock.json
	npm ci --prefix conformance --no-audit --no-fund
	touch $@

conformance: conformance/node_modules/.installed  ## the official MCP conformance suite, server and client sides
	$(PY) conformance/run.py server --spec-version $(CONFORMANCE_SPEC); s=$$?; \
	$(PY) conformance/run.py client --command "$(PY) conformance/everything_client.py" \
	  --spec-version $(CONFORMANCE_SPEC); c=$$?; exit $$(( s || c ))
