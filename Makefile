# The README's two commands (demo, test) and the benchmarks; each sets itself up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint browser services bench coverage conformance clean

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

# The browser suite drives Debian's Chromium: installed only when it is missing.
browser:
	@test -x /usr/bin/chromium -a -x /usr/bin/chromedriver || { \
	  sudo=$$(test "$$(id -u)" -eq 0 || echo sudo); \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; }

# The scale-out suite starts Debian's redis-server and nginx: installed only when missing.
services:
	@test -x /usr/bin/redis-server -a -x /usr/sbin/nginx || { \
	  sudo=$$(test "$$(id -u)" -eq 0 || echo sudo); \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server nginx; }

test: lint browser services
	$(BIN)/python -m pytest

coverage: $(STAMP)
	$(BIN)/coverage run -m pytest -q -m "not e2e"
	$(BIN)/coverage report --skip-covered --sort=cover

bench: $(STAMP)
	$(BIN)/python -m benchmarks

conformance: $(STAMP)
	$(BIN)/python tests/conformance_suite/run.py

clean:
	rm -rf $(VENV) .venv-fastmcp .conformance .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage
