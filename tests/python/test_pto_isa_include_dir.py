"""pypto.runtime.pto_isa_include_dir(): a pto-isa checkout's include/ when $PTO_ISA_ROOT names one,
else the simulator's own pto-isa headers, so that a model adding it to a hand-written kernel's
include_dirs (pypto-lib's paged_attention_cce.py does at import) runs without a checkout."""

import pathlib

import pytest
from pypto.runtime import pto_isa_include_dir

EXTERN_INCLUDE = pathlib.Path(__file__).parents[2] / "plugins" / "sim" / "extern_include"


def test_without_pto_isa_root_it_is_the_simulators_pto_headers(monkeypatch):
    monkeypatch.delenv("PTO_ISA_ROOT", raising=False)
    monkeypatch.delenv("PYPTO_SIM_EXTERN_INCLUDE", raising=False)
    include = pathlib.Path(pto_isa_include_dir())
    assert (include / "pto" / "pto-inst.hpp").is_file()
    assert include.resolve() == EXTERN_INCLUDE.resolve()


def test_pto_isa_root_wins(monkeypatch, tmp_path):
    (tmp_path / "include").mkdir()
    monkeypatch.setenv("PTO_ISA_ROOT", str(tmp_path))
    assert pto_isa_include_dir() == str(tmp_path / "include")


def test_a_pto_isa_root_without_include_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PTO_ISA_ROOT", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=f"PTO_ISA_ROOT={str(tmp_path)!r} has no include/ directory"):
        pto_isa_include_dir()
