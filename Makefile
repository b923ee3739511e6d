# The README's two commands (demo, test) and the benchmarks; each sets itself up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench coverage conformance clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

coverage: $(STAMP)
	$(BIN)/coverage run -m pytest -q -m "not e2e"
	$(BIN)/coverage report --skip-covered --sort=cover

bench: $(STAMP)
	$(BIN)/python -m benchmarks

conformance: $(STAMP)
	$(BIN)/python tests/conformance_suite/run.py

clean:
	rm -rf $(VENV) .conformance .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage
