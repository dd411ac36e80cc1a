# The two commands the README promises: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test coverage rules-coverage chromium lint typecheck lock install install-dev clean screenshots vendor

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Each install stamp depends on its lock file, so a changed lock reinstalls.
$(VENV)/.installed: requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --require-hashes -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --require-hashes -r requirements-dev.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	HOST=$(HOST) PORT=$(PORT) $(BIN)/crusade serve --demo-if-empty

lint: install-dev
	$(BIN)/ruff check app tests bench
	$(BIN)/ruff format --check app tests bench

typecheck: install-dev
	$(BIN)/mypy
	$(BIN)/mypy --explicit-package-bases bench

# PostgreSQL: TEST_DATABASE_URL if set, else the local server (installed and started by
# scripts/ensure-postgres.sh when we are root). Without one, only SQLite runs (CI fails).
# Tests run in parallel, one xdist worker per CPU (PYTEST_WORKERS=0: all in one process),
# each worker on a PostgreSQL database of its own; tests/conftest.py's GROUPS names the tests
# that keep to one worker (browser, live servers, fuzz).
PYTEST_WORKERS ?= auto
# Bytecode is cached for the test loop even where the shell asks not to: without the cache
# every worker (and every server a test starts) compiles app/ and rewrites the tests' asserts
# again, 4 s of each worker's start (issue 24).
# The rules library's coverage is its own unit tests' (tests/rules, 95 % at least); the rest
# of the suite runs untraced: tracing every line cost about a fifth of its time (issue 50).
# `make coverage` traces the whole suite over the whole app.
SUITE := TEST_DATABASE_URL="$${TEST_DATABASE_URL:-$$(scripts/ensure-postgres.sh || true)}" \
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup
test coverage rules-coverage: export PYTHONDONTWRITEBYTECODE=
# The checks before the suite run side by side, each one's output kept together: on a fresh
# machine mypy is one process for 13 s and the rules' coverage run uses 1.6 cores for 16 s,
# so together they end 6-7 s sooner than one after the other (issue 50). Chromium is made sure
# of meanwhile (apt-get, if it is missing, waits on the network more than on the CPU).
test: install-dev
	$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck rules-coverage chromium
	$(SUITE) --durations=25 --ignore=tests/rules

# The rules library's coverage, measured from its own tests (the rest of the suite runs
# untraced: tracing cost a fifth of its time).
rules-coverage: install-dev
	$(BIN)/pytest tests/rules -n $(PYTEST_WORKERS) -q --cov=app/rules \
	  --cov-report=term-missing:skip-covered --cov-fail-under=95

chromium:
	scripts/ensure-chromium.sh

coverage: install-dev chromium
	$(SUITE) --cov=app --cov-report=term-missing:skip-covered

# PNGs of the main pages (demo campaign) at phone and desktop width into docs/screenshots/.
screenshots: install-dev chromium
	$(BIN)/python scripts/screenshots.py

# Front-end packages (htmx, Pico, axe-core) from npm at the versions package-lock.json pins,
# copied into app/web/static/vendor/ and tests/browser/vendor/. The copies are committed, so
# `make run` and `make test` need no node; run this after changing package.json.
vendor:
	npm ci --no-audit --no-fund
	npm run vendor

# Regenerate the pinned, hashed lock files after changing pyproject.toml.
lock:
	uv pip compile pyproject.toml --generate-hashes -o requirements.lock --python-version 3.11
	uv pip compile pyproject.toml --extra test --generate-hashes -o requirements-dev.lock --python-version 3.11

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage
