# mcpbind: every target CI runs is here. `make help` lists them.
PY ?= python
export MYPYPATH := runtime:generated:codegen

.PHONY: help setup demo schema gen gen-check lint typecheck test check ci bench-codec bench-rt

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

setup:  ## install mcpbind (editable) with the generator, test tools and benchmark peers
	$(PY) -m pip install -q -e '.[dev,peers]'

demo:  ## the main job: a client talking to the bundled example servers over stdio
	$(PY) -m examples.demo

schema:  ## copy (or download) the pinned schemas and examples, checking sha256
	$(PY) -m mcpbind_codegen sync-schemas

gen: schema  ## regenerate generated/ from the pinned schemas
	$(PY) -m mcpbind_codegen generate-all

gen-check: schema  ## regenerate in memory and fail on any difference from generated/
	$(PY) -m mcpbind_codegen check

lint:  ## ruff lint (all code) and format check (hand-written code)
	ruff check codegen generated runtime tests bench examples
	ruff format --check codegen runtime tests bench examples

typecheck:  ## mypy --strict over the three layers and the examples
	mypy --strict -p mcpbind_codegen -p mcpbind_types -p mcpbind -p examples

test: schema  ## the test suite, warnings as errors
	$(PY) -m pytest -W error -q

check: gen-check lint typecheck test  ## what CI runs: the README's test command

bench-codec: schema  ## codec benchmark: mcpbind vs the official Python SDK, same process
	$(PY) bench/bench_codec.py

bench-rt: bench/rt/peers/ts/node_modules  ## round trips: mcpbind vs official Python SDK vs TypeScript SDK vs raw floor
	$(PY) bench/rt/run.py

bench/rt/peers/ts/node_modules: bench/rt/peers/ts/package-lock.json
	npm ci --prefix bench/rt/peers/ts --no-audit --no-fund
