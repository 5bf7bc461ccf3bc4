# tilecosim — the two commands a user types are `make demo` and `make test`;
# both create .venv and install the project (editable, with test extras) when needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= auto

.PHONY: install demo test clean

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

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
