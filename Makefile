# tilecosim — the two commands a user types are `make demo` and `make test`;
# both create .venv and install the project (editable, with test extras) when needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= auto

.PHONY: install demo test bench-tload clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/tilecosim demo

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -q

# efficiency / latency table of the TLOAD engine, and Yosys cell and flip-flop counts
bench-tload: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python -m hdl.bench_tload --area --json build/bench_tload.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
