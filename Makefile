# Fresh machine: `make run` serves the app on the bundled demo data; `make test` runs the suite.
PY        ?= python3
VENV      := .venv
VPY       := $(VENV)/bin/python
STORE     ?= data/demo.duckdb
STAMP     := $(VENV)/.installed

.PHONY: run test test-fast check setup store bench bench-paper clean-store docs docs-build docs-outputs docs-screenshots

# The installers (requirements-setup.txt), then uv installs the exact versions of the
# requirements files, then the package itself in editable mode (no new downloads: its
# dependencies are already there), so .venv/bin/lbe is the command. Everything is
# byte-compiled here, the checkout's own modules included: an environment with
# PYTHONDONTWRITEBYTECODE set would otherwise compile them from source in every process
# (the suite starts hundreds).
$(STAMP): requirements-setup.txt requirements.txt requirements-dev.txt pyproject.toml setup.py
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install --quiet -r requirements-setup.txt
	$(VENV)/bin/uv pip install --quiet --python $(VPY) --compile-bytecode -r requirements-dev.txt
	$(VPY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(VPY) -m compileall -q lifelong_core ui
	touch $(STAMP)

setup: $(STAMP)

# The demo store is built from the committed sources under data/ (no network, no training).
# It is not rebuilt behind the user's back when those sources change (the app can add
# datasets to it); a stale store gets a note instead. The venv is an order-only
# prerequisite: reinstalling packages must not ask for a store that already exists.
$(STORE): | $(STAMP)
	$(VPY) -m lifelong_core build-demo --store $(STORE)

store: $(STORE)
	@for src in data/lifelong_digits/MANIFEST.json data/open_llm_leaderboard_v2/shapes.json \
	  data/open_llm_leaderboard_v2/lm_eval_tasks.csv; do \
	  if [ $$src -nt $(STORE) ]; then \
	    echo "note: $(STORE) is older than $$(dirname $$src)/; 'make clean-store store' rebuilds it (dropping anything added to it)." >&2; fi; done

run: store
	$(VPY) -m ui.serve --server.headless true --browser.gatherUsageStats false

# The browser tests are one group on one worker, so each server starts and warms its caches
# once, and the documentation's examples another (tests/conftest.py: WORKER_GROUPS); three
# workers on two cores. Measured, the suite's wall time is the same as with two
# workers and work stealing, with fewer servers started. Tests that share a server or a
# store copy it or start their own (free port, tmp_path).
test: store
	$(VPY) -m pytest -q -n 3 --dist loadgroup

# The inner loop: everything but the slow, browser and harness tests.
test-fast: store
	$(VPY) -m pytest -q -n 2 --dist worksteal -m "not slow and not browser and not harness"

# Quality gates (CI runs them beside the tests): lint, format, types.
check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Demo- and laptop-scale benchmarks, one after another (about 25 minutes); numbers go to
# benchmarks/results/ (docs/benchmarks.md shows them). The paper-scale run needs ~20 GB of disk and ~15 GB of RAM.
bench: store
	$(VPY) -m benchmarks.bench_sweep
	$(VPY) -m benchmarks.bench_store
	$(VPY) -m benchmarks.bench_stats
	$(VPY) -m benchmarks.bench_matching
	$(VPY) -m benchmarks.bench_estimators
	$(VPY) -m benchmarks.bench_demo_data
	$(VPY) -m benchmarks.bench_app
	$(VPY) -m benchmarks.bench_coverage --textbook

bench-paper: $(STAMP)
	$(VPY) -m benchmarks.bench_paper_scale

clean-store:
	rm -f $(STORE) $(STORE).wal

# The documentation site (mkdocs-material): `make docs` serves it on http://localhost:8000,
# `make docs-build` builds it strictly into site/ (as CI does).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VPY) -m mkdocs serve

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VPY) -m mkdocs build --strict --site-dir site

# What each example of README, Getting started and the tutorials prints, written under it,
# and the notebooks executed with their outputs (the docs test compares them).
docs-outputs: store
	$(VPY) -m docs.outputs

# Screenshots of every page for the documentation, taken by the browser smoke test on the
# demo store.
docs-screenshots: store
	LBE_DOCS_SCREENSHOTS=docs/images/app $(VPY) -m pytest -q tests/browser/test_smoke.py -k test_page_renders_without_exception
