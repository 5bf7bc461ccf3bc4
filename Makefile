# tilecosim — the two commands a user types are `make demo` and `make test`;
# both create .venv and install the project (editable, with test extras) when needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= auto
# make test runs one pytest worker more than there are CPUs: its tests wait in turn for a
# simulator build another worker holds the lock of, for a signal's moment or a scheduler's
# timeout, and the extra worker fills those waits (docs/verification.md, the tiers); a worker
# that runs out of tests takes some of another's (--dist worksteal), so that no core idles
# while the last worker works through its share
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
# setuptools' editable install of a package-dir mapping (model/ -> tilecosim.model) prints a
# generic banner about same-named folders; the mapping is deliberate and tested
# (tests/test_packaging.py), so the banner is silenced.
INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet
# Verilator/Icarus builds of the generated Verilog, shared by the tests (keyed by content);
# `make clean` removes them.  WAVES=1 (make test WAVES=1) writes one FST per Verilog run
# to build/waves.
export TILECOSIM_BUILD_CACHE ?= $(CURDIR)/build/sim-cache
export TILECOSIM_WAVES_DIR ?= $(CURDIR)/build/waves

.PHONY: install demo test check bench bench-tload bench-units bench-tiles bench-tstore bench-sim bench-cluster lint fuzz mutation mutation-regress \
        formal regress regress-designs clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(INSTALL) -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/tilecosim demo

# the test tiers (docs/verification.md): `make test` is the inner loop, every test not marked
# slow (at most 10 minutes on 2 cores; it kills every hand-written mutant by itself:
# tilecosim mutation --tier test); `make check` runs every test, as CI does
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist worksteal -q -m "not slow"

check: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -q

# every figure in one run (tilecosim bench: efficiency, latency, simulation speed, golden model
# speed, Yosys area; its measured run time is in docs/benchmarks.md); the bench-* targets are
# its parts alone
bench: $(STAMP)
	$(INSTALL) -e '.[test,bench]'
	$(BIN)/tilecosim bench --out build/bench

bench-tload: $(STAMP)
	$(BIN)/tilecosim bench --only tload --out build/bench-tload

bench-units: $(STAMP)
	$(BIN)/tilecosim bench --only l1l0,load-align --out build/bench-units

# the RTL tile system: a TLOAD stream against the engine alone, TADD, latency, area
bench-tiles: $(STAMP)
	$(BIN)/tilecosim bench --only tiles --out build/bench-tiles

# the TSTORE engine at 64 KB per layout, element size and W, and the kernel through the tile
# system
bench-tstore: $(STAMP)
	$(BIN)/tilecosim bench --only tstore --out build/bench-tstore

# simulated cycles per second (Amaranth, Icarus, Verilator; Python-driven and bulk harness)
# and regress scenarios per second on each backend
bench-sim: $(STAMP)
	$(BIN)/tilecosim bench --only speed,regress --out build/bench-sim

# regress with --jobs 2 against a Dask LocalCluster of 2 workers (the scheduler's overhead),
# and the run predicted for 10 and 100 workers
bench-cluster: $(STAMP)
	$(BIN)/tilecosim bench --only cluster --out build/bench-cluster

# verilator --lint-only -Wall on every generated top, with hdl/lint_waivers.vlt
lint: $(STAMP)
	$(BIN)/tilecosim verilog --lint --out build/verilog

# the fuzz targets of tests/cli/test_cli_fuzz.py with 10,000 examples each (make test runs 150)
fuzz: $(STAMP)
	TILECOSIM_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -n $(JOBS) -q tests/cli/test_cli_fuzz.py

# single-point faults in the HDL, each run against the comparison suite: the hand-written
# list and 60 generated from the gateware's AST with seed 1 (its measured run time is in
# docs/verification.md)
mutation: $(STAMP)
	mkdir -p build
	$(BIN)/tilecosim mutation --generated 60 --seed 1 --json build/mutation.json

# the regress tier (D17): each mutant meets tilecosim regress alone (Amaranth, 200 scenarios
# per operation, seeds 1, 2, 3), as a design from elsewhere does; docs/verification.md
mutation-regress: $(STAMP)
	mkdir -p build
	$(BIN)/tilecosim mutation --tier regress --generated 60 --seed 1 \
	    --json build/mutation-regress.json

# every formal proof of the gateware (SymbiYosys + yices, from PyPI; make test runs the quick
# ones); proof depths and run times are in docs/verification.md
formal: $(STAMP)
	mkdir -p build
	$(BIN)/tilecosim formal --json build/formal.json

# the coverage-driven regression: 20,000 scenarios per operation on Verilator and 1,000 on
# Icarus (the batch harnesses), 1,000 on Amaranth's simulator (the Python-driven bench), and
# 500 programs of the tile system on Verilator (checked after every instruction); the
# Verilator runs with code coverage (build/regress/coverage, build/regress-program/coverage)
regress: $(STAMP)
	$(BIN)/tilecosim regress --backend verilator --count 20000 --seed 1 --coverage \
	    --require-coverage --json
	$(BIN)/tilecosim regress --backend verilator --ops program --count 500 --seed 1 --coverage \
	    --require-coverage --out build/regress-program --json
	$(BIN)/tilecosim regress --backend icarus --count 1000 --seed 1 --json
	$(BIN)/tilecosim regress --backend amaranth --count 1000 --seed 1 --json
	$(MAKE) regress-designs

# the example designs from elsewhere (examples/designs/, README "Verify your own design"):
# 10,000 scenarios each on Verilator and 1,000 on Icarus, against the golden model
regress-designs: $(STAMP)
	$(BIN)/tilecosim regress --backend verilator --ops load-align --count 10000 --seed 1 \
	    --dut examples/designs/load_align_unit.sv --out build/regress-designs/load-align --json
	$(BIN)/tilecosim regress --backend verilator --ops tload --count 10000 --seed 1 \
	    --dut examples/designs/tload_engine_bytewise.v --out build/regress-designs/tload --json
	$(BIN)/tilecosim regress --backend verilator --ops store-align --count 10000 --seed 1 \
	    --dut examples/designs/store_align_unit.sv --out build/regress-designs/store-align --json
	$(BIN)/tilecosim regress --backend icarus --ops load-align --count 1000 --seed 1 \
	    --dut examples/designs/load_align_unit.sv --out build/regress-designs/load-align-icarus --json
	$(BIN)/tilecosim regress --backend icarus --ops tload --count 1000 --seed 1 \
	    --dut examples/designs/tload_engine_bytewise.v --out build/regress-designs/tload-icarus --json
	$(BIN)/tilecosim regress --backend icarus --ops store-align --count 1000 --seed 1 \
	    --dut examples/designs/store_align_unit.sv --out build/regress-designs/store-align-icarus --json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
