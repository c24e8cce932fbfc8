# Executable Theory — every target does its own set-up; `make book` and `make test` work on a fresh clone.
# GPU users: `make venv TORCH_SPEC="torch"` (or install your CUDA torch into .venv first); the CPU wheel
# torch==2.13.0 is the default so that CI never pulls a multi-GB CUDA build.

PYTHON     ?= python3
VENV       ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN        := $(VENV)/bin
STAMP      := $(VENV)/.installed
NBMAKE_TIMEOUT ?= 180

.PHONY: venv book test test-unit test-chapters bench lint live clean help

help:
	@echo "make book   build _build/html (executes every chapter; zero warnings allowed)"
	@echo "make test   unit tests + every chapter executed as a test (pytest --nbmake book/)"
	@echo "make bench  benchmarks in bench/ (prints ratio tables, writes bench/results/)"
	@echo "make venv   create/refresh .venv only (idempotent)"
	@echo "make lint   ruff"

venv: $(STAMP)

# Re-installs only when the dependency list changes; `pip install -e` keeps src/ live.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[book,test]"
	touch $(STAMP)

# -W -n --keep-going: every warning fails the build; --all + execute_notebooks: force make stale outputs impossible.
book: $(STAMP)
	$(BIN)/jupyter-book build . --all -W -n --keep-going

test: test-unit test-chapters

test-unit: $(STAMP)
	$(BIN)/python -m pytest tests/ -q

test-chapters: $(STAMP)
	$(BIN)/python -m pytest --nbmake --nbmake-timeout=$(NBMAKE_TIMEOUT) book/ -q --durations=0

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src kernels tests bench conftest.py

clean:
	rm -rf _build
