# Fresh machine: `make run` serves the app on the bundled demo data; `make test` runs the suite.
PY        ?= python3
VENV      := .venv
VPY       := $(VENV)/bin/python
STORE     ?= data/demo.duckdb
STAMP     := $(VENV)/.installed

.PHONY: run test setup store bench clean-store smoke

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

setup: $(STAMP)

# The demo store is built from the committed sources under data/ (no network, no training).
$(STORE): $(STAMP)
	$(VPY) -m lifelong_core build-demo --store $(STORE)

store: $(STORE)

run: $(STORE)
	$(VPY) -m streamlit run app.py --server.headless true --browser.gatherUsageStats false

test: $(STORE)
	$(VPY) -m pytest -q

bench: $(STORE)
	$(VPY) -m benchmarks.run_all

clean-store:
	rm -f $(STORE) $(STORE).wal
