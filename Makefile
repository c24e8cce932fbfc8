# Executable Theory — every target does its own set-up; `make book` and `make test` work on a fresh clone.
# GPU users: `make venv TORCH_SPEC="torch"` (or install your CUDA torch into .venv first); the CPU wheel
# torch==2.13.0 is the default so that CI never pulls a multi-GB CUDA build.

PYTHON     ?= python3
VENV       ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN        := $(VENV)/bin
STAMP      := $(VENV)/.installed
NBMAKE_TIMEOUT ?= 180
# Test processes (pytest-xdist): one per core by default; `make test JOBS=0` runs every suite in one process.
JOBS       ?= $(shell nproc 2>/dev/null || echo 1)
XDIST      := $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist worksteal)

.PHONY: venv vendor book pdf test test-unit test-chapters test-browser test-changed test-start audit bench lint live clean help

help:
	@echo "make book   build _build/html (executes every chapter; zero warnings allowed), then the PDF"
	@echo "make pdf    the whole book as _build/html/executable-theory.pdf (headless Chromium prints the HTML)"
	@echo "make test   unit tests + every chapter executed as a test (pytest --nbmake book/) + browser tests"
	@echo "make test-changed  only the tests, chapters and seed audits whose dependencies changed since the last green run"
	@echo "make audit  re-run the 20-unseen-seed audit of every chapter whose record is stale (CHAPTERS=\"a b\" or all: those)"
	@echo "make bench  benchmarks in bench/ (prints ratio tables, writes bench/results/)"
	@echo "make venv   create/refresh .venv only (idempotent)"
	@echo "make live   serve the book + a local Jupyter kernel on 127.0.0.1 so 'Live Code' runs widgets"
	@echo "make vendor npm ci + copy MathJax/require.js/widget manager/thebe into _static/vendor (offline pages)"
	@echo "make test-browser  headless-Chromium tests of the built book (tests/test_site.py)"
	@echo "make lint   ruff"

venv: $(STAMP)

# Re-installs only when the dependency list changes; `pip install -e` keeps src/ live.
$(STAMP): pyproject.toml scripts/ipython_kernel_config.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	mkdir -p $(VENV)/etc/ipython && cp scripts/ipython_kernel_config.py $(VENV)/etc/ipython/
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[book,test]"
	touch $(STAMP)

# Browser assets pinned in package-lock.json, copied into the git-ignored _static/vendor/ (needs npm).
vendor: _static/vendor/VERSIONS.json

_static/vendor/VERSIONS.json: package.json package-lock.json scripts/vendor.sh
	scripts/vendor.sh

# -W -n --keep-going: every warning fails the build. Chapters execute through the cache (execute_notebooks: cache);
# scripts/chapter_cache.py run first drops the entry of every chapter whose dependencies changed, so an unchanged
# chapter is not executed again and a changed one (or one whose src/ package changed) always is, and executes the
# chapters without a cached run JOBS at a time (a failing one stops here, with its traceback); the build then
# executes none.
book: $(STAMP) vendor
	mkdir -p _build/html && touch $(BUILT).start
	$(BIN)/python scripts/chapter_cache.py run $(if $(filter 0,$(JOBS)),1,$(JOBS))
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	$(BIN)/python scripts/make_pdf.py
	mv $(BUILT).start $(BUILT)

# The book as one PDF, printed from the built HTML by headless Chromium (make book runs it last).
pdf: $(STAMP)
	test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python scripts/make_pdf.py

# A build stamp newer than every source: the browser tests reuse a build only when nothing changed since.
BUILT   := _build/html/.built
SOURCES := $(shell find book src kernels scripts _static -type f -not -path '*/vendor/*' -not -name '*.pyc' 2>/dev/null) \
           _config.yml _toc.yml pyproject.toml package-lock.json
$(BUILT): $(SOURCES)
	$(MAKE) book

# A green `make test` records the snapshot of the sources taken when it started as the last green run
# (_build/.last_green.json), from which `make test-changed` selects. The chapters execute first (into the execution
# cache); then the unit suites and the book build (which executes nothing more) run side by side, since the Sphinx
# build and the PDF's printing keep about one core busy and the unit tests take the rest; then the browser tests,
# alone (they time the explorer's state switches).
test: test-start
	$(MAKE) --no-print-directory test-chapters
	$(MAKE) --no-print-directory $(if $(XDIST),-j2 --output-sync=line) test-unit $(BUILT)
	$(MAKE) --no-print-directory test-browser
	$(BIN)/python scripts/test_select.py record

test-start: $(STAMP)
	$(BIN)/python scripts/test_select.py snapshot

# Only what changed since the last green run (scripts/test_select.py): the unit tests, chapters and seed audits
# whose dependencies (the chapter cache's closure) changed; everything when the shared core or the test machinery
# changed. No browser tests or book build: `make test` before merging.
test-changed: $(STAMP)
	$(BIN)/python scripts/test_select.py run $(JOBS)

# The seed audit (scripts/seed_audit.py): every chapter's 20 unseen seeds, JOBS at a time, into the committed
# records tests/seed_audit/<slug>.json. Without CHAPTERS, the chapters whose record is stale or missing;
# CHAPTERS="a b" those chapters, CHAPTERS=all every one. Commit the records it writes.
CHAPTERS ?=
audit: $(STAMP)
	$(BIN)/python scripts/seed_audit.py run --jobs $(if $(filter 0,$(JOBS)),1,$(JOBS)) \
	  $(if $(filter all,$(CHAPTERS)),--all,$(CHAPTERS))

# The Triton-interpreter parity tests run in their own process: the interpreter must own every @triton.jit
# decoration, and other tests importing the kernel modules first (through the packages) would break that.
# With several test processes, each gets one intra-op thread (OMP_NUM_THREADS=1): JOBS processes share the cores
# instead of each spinning a thread per core.
ONE_THREAD := $(if $(XDIST),OMP_NUM_THREADS=1)
test-unit: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest tests/test_kernels.py -q $(XDIST)
	$(ONE_THREAD) $(BIN)/python -m pytest tests/ -q -m "not browser and not chapters and not built" \
	  --ignore=tests/test_kernels.py $(XDIST)

# Every chapter executed as a test, through the same execution cache as `make book` (each chapter runs once until it
# or what it imports changes); `pytest --nbmake book/` still executes them all afresh, on its own.
# With several chapters at once, each kernel gets one intra-op thread too.
test-chapters: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest tests/test_chapters.py -m chapters -q -rA $(XDIST)

# Against the built book (rebuilt first if any source is newer); skips (saying how to enable) without
# Chromium unless CI is set.
test-browser: $(STAMP) $(BUILT)
	$(BIN)/python -m pytest -m "browser or built" tests/test_site.py tests/test_verdict_rules.py -q -rs $(XDIST)

# Rebuilds first if the book is older than its sources; Ctrl-C stops both servers.
live: $(STAMP) vendor
	$(BIN)/python scripts/live.py

# The peers bench/ compares against (the `bench` extra: JAX, cvxpy, ...) are installed first, into the same .venv; a
# bench whose peer still cannot run fails, saying so (bench/run_all.py), instead of printing a table without it.
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src kernels tests bench scripts conftest.py

clean:
	rm -rf _build
