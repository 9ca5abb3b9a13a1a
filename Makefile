# Two commands set up everything on a fresh machine with only python3: `make test` and `make lab`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lab demo app bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

demo: $(STAMP)
	$(BIN)/toolsearch-lab demo

app: $(STAMP)
	$(BIN)/voila notebooks/app_stepper.ipynb

bench: $(STAMP)
	$(BIN)/python benchmarks/search_speed.py
	$(BIN)/python benchmarks/retrieval_quality.py

clean:
	rm -rf $(VENV) .pytest_cache build dist *.egg-info
