# Tokenization, from bytes to production — build the book, run the tests.
#
#   make book       set up .venv (once), build _build/html (strict) from the executed notebooks
#   make test       set up .venv (once), then: pytest tests → pairing check → nbval → book
#                   → student edition → site tests (headless Chromium, network blocked),
#                   and each stage's wall time
#   make check      the edit loop: unit tests and notebooks the current change can affect
#   make test-site  only the site tests, on what make book and make student built
#   make notebooks  re-sync notebooks/*.ipynb from book/*.md and re-execute them in place
#   make student    the student edition (no solutions) into _build/student/_build/html
#   make serve      serve _build/html on http://127.0.0.1:8000
#   make bench      run benchmarks/run.py and benchmarks/models.py (BENCH_OUT=DIR: write there)
#   make clean      remove build outputs (make distclean also removes .venv)
#
# A fresh machine needs only Python 3.11+ and GNU make; everything else comes from PyPI
# (requirements.txt) during set-up, and the site tests' Chromium from Debian (installed by
# make test when missing and run as root; otherwise it says how). Nothing downloads at
# run time.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules --no-print-directory

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-done
PORT   ?= 8000

# Every notebook run (book build, make notebooks, nbval) gets PYTHONHASHSEED=0: Python
# salts str/bytes hashes per process, so set iteration order — and anything derived from
# it (a tie broken by set order, a dict built from a set) — would otherwise differ between
# the run that produced the committed outputs and nbval's re-run. The unit tests do not
# get it, so hash-order bugs still show up there. toklab.teaching.book.setup() warns when unset.
NBENV := PYTHONHASHSEED=0
# Unit tests run in this many pytest-xdist worker processes (the CI machine has 2 cores);
# `make test-unit TEST_WORKERS=0` runs them in one process.
TEST_WORKERS ?= 2
# Kernel lookup: prefer the kernelspec installed into .venv over any user-level
# ~/.local/share/jupyter/kernels/python3 that might point at another interpreter.
export JUPYTER_PREFER_ENV_PATH := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

JB_STRICT := -W -n --keep-going
# nbval runs the notebooks in TEST_WORKERS processes, each notebook whole in one of them
# (--dist loadfile: a notebook's cells share one kernel, in order).
NBVAL     := --nbval --nbval-current-env --nbval-sanitize-with .nbval_sanitize.cfg -n $(TEST_WORKERS) --dist loadfile

.PHONY: help setup book test check test-unit test-pairing test-nbval test-site browser notebooks student serve bench clean distclean

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------------------- set-up
# Runs once; again only when requirements.txt or pyproject.toml change.
setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required (found " + sys.version.split()[0] + "); set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -r requirements.txt
	@# Register this venv's interpreter as the "python3" kernel, inside the venv
	@# (share/jupyter/kernels/python3/kernel.json with an absolute path), so chapters
	@# execute with .venv/bin/python whatever other kernels the machine has.
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)"
	@# Real vocabularies: fetch GPT-2's r50k_base rank file from the openai-whisper sdist
	@# on PyPI (pip download), check its SHA-256 and store it inside the venv. Set-up
	@# time only: no chapter or test touches the network.
	$(BIN)/python -m toklab.data.vocabs fetch
	touch $@

# ---------------------------------------------------------------------------- the book
# Both editions render the committed executed notebooks (notebooks/*.ipynb) and execute
# nothing: `make notebooks` executes the chapters, and `make test` re-executes them under
# nbval and compares every output before it builds. toklab.teaching.edition stages each edition's
# sources (each chapter as its notebook, which must have the same cells as its book/*.md,
# or the stage stops and says to run `make notebooks`) and the strict build renders them.
# The full edition goes to _build/html; each page offers its notebook and its .md.
book: $(STAMP)
	$(BIN)/python -m toklab.teaching.edition stage full _build/full/site
	$(NBENV) $(BIN)/jupyter-book build _build/full/site --all $(JB_STRICT) --path-output .

# The student edition: every solution removed, built into _build/student/_build/html.
# _config.yml with _config_student.yml merged on top (JB1's --config replaces, it does
# not layer), and each chapter's notebook with the solutions' prose and code cells
# removed. See the docstring of toklab/teaching/edition.py for why sphinx-exercise's
# hide_solutions is not enough.
student: $(STAMP)
	$(BIN)/python -m toklab.teaching.edition stage student _build/student/site
	$(NBENV) $(BIN)/jupyter-book build _build/student/site --all $(JB_STRICT) --path-output _build/student
	@echo "Student edition: _build/student/_build/html/index.html"

# ---------------------------------------------------------------------------- tests
# In order, stopping at the first failure: (a) unit/property/parity tests, (b) the
# .md <-> .ipynb pairing check, (c) nbval on the committed notebooks (each chapter's only
# execution in a test run), (d) strict book build and (e) strict student-edition build,
# both rendering the notebooks (c) just checked, (f) the built site: offline assets,
# downloads and editions, and headless Chromium over every page with the network blocked.
# Each stage's wall time is printed at the end, also when a stage fails.
TEST_STAGES := test-unit test-pairing test-nbval book student test-site
test: $(STAMP)
	@names=(); secs=(); status=0; \
	for stage in $(TEST_STAGES); do \
	  start=$$(date +%s); \
	  $(MAKE) $$stage || status=$$?; \
	  names+=($$stage); secs+=($$(( $$(date +%s) - start ))); \
	  [ $$status -eq 0 ] || break; \
	done; \
	echo "== stage times (wall clock)"; total=0; \
	for i in "$${!names[@]}"; do \
	  printf '   %-13s %5ds\n' "$${names[$$i]}" "$${secs[$$i]}"; total=$$(( total + secs[i] )); \
	done; \
	printf '   %-13s %5ds\n' total $$total; \
	if [ $$status -ne 0 ]; then echo "make test: FAILED in stage $$stage" >&2; exit $$status; fi; \
	echo "make test: all six stages passed"

test-unit: $(STAMP)
	@echo "== (a) pytest tests"
	@rc=0; $(BIN)/python -m pytest -n $(TEST_WORKERS) tests || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "FAIL: pytest collected no tests in tests/ (exit 5)" >&2; exit 1; fi; \
	exit $$rc

# Every chapter source must have its paired notebook committed, with the same cells.
# jupytext --sync rewrites whichever side is older; any resulting change, or a notebook
# git does not know, means the committed pair was out of date: run `make notebooks` and
# commit book/ and notebooks/ together.
test-pairing: $(STAMP)
	@echo "== (b) pairing check: jupytext --sync book/ch*.md, then git diff"
	@shopt -s nullglob; chapters=(book/ch*.md); \
	if [ $${#chapters[@]} -eq 0 ]; then echo "FAIL: no chapter sources book/ch*.md" >&2; exit 1; fi; \
	$(BIN)/jupytext --quiet --sync "$${chapters[@]}"; \
	untracked=$$(git status --porcelain --untracked-files=all -- notebooks | sed -n 's/^?? //p'); \
	if [ -n "$$untracked" ]; then \
	  echo "FAIL: notebooks not committed (run make notebooks, then commit them):" >&2; \
	  echo "$$untracked" >&2; exit 1; fi; \
	if ! git diff --exit-code --stat -- notebooks book; then \
	  echo "FAIL: book/*.md and notebooks/*.ipynb were out of sync (diff above);" >&2; \
	  echo "      run make notebooks and commit both." >&2; exit 1; fi; \
	echo "pairing OK: $${#chapters[@]} chapter(s)"

# Committed outputs must reproduce; only cells marked "# NBVAL_IGNORE_OUTPUT" may vary.
# Kernel = the interpreter running pytest (.venv); cwd = notebooks/.
test-nbval: $(STAMP)
	@echo "== (c) nbval on notebooks/"
	@rc=0; $(NBENV) $(BIN)/python -m pytest $(NBVAL) notebooks/ || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "FAIL: nbval found no notebooks in notebooks/ (exit 5)" >&2; exit 1; fi; \
	exit $$rc

# The built site (run after `make book` and `make student`; it reads their output):
# tests/site checks that no page loads anything from outside the site, the downloads and
# the two editions, then loads every page in headless Chromium with every request
# outside the site refused: the full edition at desktop width over HTTP and at phone
# size from disk, the student edition from disk. Screenshots of every page at both
# sizes go to _build/screenshots/.
test-site: $(STAMP) browser
	@echo "== (f) site tests: tests/site (offline assets, downloads, editions, headless Chromium)"
	@rc=0; $(BIN)/python -m pytest tests/site || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "FAIL: pytest collected no tests in tests/site (exit 5)" >&2; exit 1; fi; \
	exit $$rc

# The edit loop, not a substitute for make test: the unit tests and chapter notebooks a
# change can affect since BASE (default HEAD: uncommitted and new files), picked by
# tests/changed.py. A changed chapter is synced to its notebook first, so nbval compares
# the notebook's committed outputs with a fresh run (run make notebooks if they differ).
BASE ?= HEAD
check: $(STAMP)
	@sel=$$($(BIN)/python tests/changed.py $(BASE)); \
	tests=$$(sed -n 1p <<<"$$sel"); notebooks=$$(sed -n 2p <<<"$$sel"); \
	if [ -z "$$tests$$notebooks" ]; then echo "make check: no tests or chapters changed since $(BASE)"; exit 0; fi; \
	for nb in $$notebooks; do $(BIN)/jupytext --quiet --sync "book/$$(basename "$${nb%.ipynb}").md"; done; \
	if [ -n "$$tests" ]; then echo "== pytest $$tests"; $(BIN)/python -m pytest -n $(TEST_WORKERS) $$tests; fi; \
	if [ -n "$$notebooks" ]; then echo "== nbval $$notebooks"; $(NBENV) $(BIN)/python -m pytest $(NBVAL) $$notebooks; fi

# Headless Chromium for the site tests: Debian's chromium (and an emoji font, so the
# screenshots show what a reader's device shows). Installed here when missing and this
# runs as root with apt-get (CI, a container); otherwise the stage stops and says how.
# CHROMIUM=/path/to/chromium uses another Chromium or Chrome.
browser:
	@if [ -n "$${CHROMIUM:-}" ] || command -v chromium >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "== installing Debian's chromium for the site tests (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null; \
	else \
	  echo "FAIL: the site tests need Chromium: sudo apt-get install chromium fonts-noto-color-emoji (or set CHROMIUM=/path/to/chromium)" >&2; \
	  exit 1; \
	fi

# ---------------------------------------------------------------------------- notebooks
# book/*.md -> notebooks/*.ipynb (inputs), then execute each notebook in place with
# nbclient and the venv's "python3" kernel, cwd = notebooks/ (as under nbval).
# record_timing=False: no per-cell timestamps, so a re-run changes a notebook only where
# an output changed.
notebooks: $(STAMP)
	@shopt -s nullglob; chapters=(book/ch*.md); \
	if [ $${#chapters[@]} -eq 0 ]; then echo "no chapter sources book/ch*.md" >&2; exit 1; fi; \
	$(BIN)/jupytext --sync "$${chapters[@]}"; \
	notebooks=(); for md in "$${chapters[@]}"; do notebooks+=("notebooks/$$(basename "$${md%.md}").ipynb"); done; \
	$(NBENV) $(BIN)/python -c "$$EXECUTE_NOTEBOOKS" "$${notebooks[@]}"

define EXECUTE_NOTEBOOKS
import sys, pathlib, nbformat
from nbclient import NotebookClient
for name in sys.argv[1:]:
    path = pathlib.Path(name)
    print(f"executing {path}", flush=True)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
endef
export EXECUTE_NOTEBOOKS

# ---------------------------------------------------------------------------- other
serve:
	@test -f _build/html/index.html || { echo "no _build/html yet: run make book first" >&2; exit 1; }
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

# The suites run as modules of the benchmarks package (harness.py measures and reports for
# both). BENCH_OUT=DIR writes the four results files into DIR instead of benchmarks/
# (a trial run that leaves the recorded results alone).
BENCH_OUT ?=
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run $(if $(BENCH_OUT),--out $(BENCH_OUT))
	$(BIN)/python -m benchmarks.models $(if $(BENCH_OUT),--out $(BENCH_OUT))

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
