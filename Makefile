# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Bytecode is cached even where the environment turns it off (PYTHONDONTWRITEBYTECODE=1):
# without it every test worker and every CLI subprocess compiles the whole package and
# rewrites every test module's asserts again (collection alone took 14 s a worker, now 5 s).
export PYTHONDONTWRITEBYTECODE :=

.PHONY: demo test lint view bench bench-ui bench-store soak-store bench-memory sandbox clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# mypy and import-linter cannot follow the editable install's import hook, so they read the
# package through a view of symlinks: $(VIEW)/sourcedesk/core -> core/, … (pyproject.toml maps
# the same names for the installed package).
VIEW := $(VENV)/package-view
view: $(STAMP)
	$(BIN)/python tests/package_view.py $(VIEW)

demo: $(STAMP)
	$(BIN)/sourcedesk demo

# The quality gates CI runs: lint and format, types (strict on core and store, see
# pyproject.toml), and the layering contracts (ARCHITECTURE.md).
lint: view
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MYPYPATH=$(VIEW) $(BIN)/mypy
	PYTHONPATH=$(VIEW) $(BIN)/lint-imports

# The whole suite twice: on today's date, then with the clock CLOCK_SHIFT_DAYS days ahead.
# The product moves its own clock (SOURCEDESK_CLOCK_SHIFT_DAYS, core/domain/clock.py), so a
# test that passes only on some days fails here, not on the day it stops passing.
CLOCK_SHIFT_DAYS ?= 200
test: lint
	@echo "pytest, pass 1 of 2: today's date"
	$(BIN)/python -m pytest -n 2 tests
	@echo "pytest, pass 2 of 2: the clock $(CLOCK_SHIFT_DAYS) days ahead"
	SOURCEDESK_CLOCK_SHIFT_DAYS=$(CLOCK_SHIFT_DAYS) $(BIN)/python -m pytest -n 2 tests

# ORCHESTRATOR=path/to/src/agents/perplexity_sources.py times its reconcile_citations side by side.
# Then the speed figures the test suite does not assert (sourcedesk.sandbox.bench_speed).
bench: $(STAMP)
	$(BIN)/python -m sourcedesk.sandbox.bench $(if $(ORCHESTRATOR),--orchestrator $(ORCHESTRATOR))
	$(BIN)/python -m sourcedesk.sandbox.bench_frozen
	$(BIN)/python -m sourcedesk.sandbox.bench_speed
	$(BIN)/python -m sourcedesk.sandbox.bench_ui

# The workbench: first screen against a bare Textual app, a tab switch, a 515-source section.
bench-ui: $(STAMP)
	$(BIN)/python -m sourcedesk.sandbox.bench_ui

# The store's share of a frozen re-run of 20 sections, on TinyDB and on a real PostgreSQL
# (started from the pgserver package for the bench, stopped after); target <= 10% on both.
bench-store: $(STAMP)
	$(BIN)/python -m sourcedesk.sandbox.bench_store

# Four processes reject, un-reject and run sections of one memo for 60 s, on PostgreSQL and on
# TinyDB, then check that nothing was lost (CI runs it after `make test`; the suite runs 5 s).
SOAK_SECONDS ?= 60
soak-store: $(STAMP)
	$(BIN)/python -m sourcedesk.sandbox.store_soak --seconds $(SOAK_SECONDS)

# Peak memory and time of `run` against a 50 MB writer answer (JSON and SSE, length announced or not).
bench-memory: $(STAMP)
	$(BIN)/python -m sourcedesk.sandbox.bench_memory

sandbox: $(STAMP)
	$(BIN)/sourcedesk sandbox

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
