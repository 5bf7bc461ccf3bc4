"""A design from elsewhere as a job carries it (tilecosim.sim.design): to a worker on
another machine, where its files are not, it brings their contents."""

import pickle

import pytest

from tilecosim.sim.design import DesignError, verilog_design


def test_a_design_brings_its_files_to_a_worker_without_them(tmp_path):
    src = tmp_path / "here" / "unit.sv"
    src.parent.mkdir()
    src.write_text("module unit(input logic clk);\nendmodule\n")
    design = pickle.loads(pickle.dumps(verilog_design(str(src))))
    assert design.sources(tmp_path / "spare") == (src,)          # the file as named
    src.unlink()                                                  # a worker elsewhere
    (copy,) = design.sources(tmp_path / "spare")
    assert copy.parent.name == f"dut-{design.digest}" and copy.name == "unit.sv"
    assert copy.read_text() == "module unit(input logic clk);\nendmodule\n"
    src.write_text("module unit(input logic clk, input logic rst);\nendmodule\n")
    assert design.sources(tmp_path / "spare") == (copy,)          # changed since: the named
    with pytest.raises(DesignError, match="changed or cannot be read"):   # version
        design.sources(None)
