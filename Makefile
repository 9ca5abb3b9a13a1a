# Two commands set up everything on a fresh machine with only python3: `make test` and `make lab`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-slow check lab demo app bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Static checks first (lint, the import layering contracts, types): cheap, and they name the line at fault.
# One mypy run: the core's strict flags are per-module settings in pyproject.toml ([[tool.mypy.overrides]]).
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python tools/import_graph.py --check
	$(BIN)/mypy

# Two tiers, and CI (.ci/run) runs both: `make test` is the checks and every test not marked slow;
# `make test-slow` the slow tier (notebooks executed, browsers, real MCP servers, wheel builds, long generated
# runs; docs/install.md lists it). Extra pytest arguments: make test PYTEST_ARGS="-k bm25 -x"
test: check
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

# Jupyter refuses to start as root without --allow-root (containers, dev boxes): pass it only then.
ROOT_FLAG = $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
# No news or update checks: a workshop room may have no network. Extra flags: make lab LAB_ARGS="--port 8899"
LAB_ARGS ?=
lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=notebooks --LabApp.news_url=None \
		--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(LAB_ARGS)

demo: $(STAMP)
	$(BIN)/toolsearch-lab demo

# The "offline" template (toolsearch_lab/ui/jupyter) is Voila's lab template without CDN stylesheets.
APP_ARGS ?=
app: $(STAMP)
	JUPYTER_PATH="$(CURDIR)/toolsearch_lab/ui/jupyter" $(BIN)/voila notebooks/app_stepper.ipynb \
		--template=offline $(APP_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/search_speed.py
	$(BIN)/python benchmarks/retrieval_quality.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache build dist *.egg-info
