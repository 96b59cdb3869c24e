# Two entry points do all the set-up on a fresh machine:
#   make serve   install everything, then serve the bundled demo corpus on http://127.0.0.1:8000
#   make test    install everything (test tools included), then lint, type-check and test
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test install lint typecheck pytest bench clean system-deps

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

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

typecheck: lint

pytest: install
	$(BIN)/pytest

test: install system-deps lint pytest

bench: install
	$(BIN)/python bench/run_core.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
