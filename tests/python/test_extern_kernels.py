"""Hand-written C++ kernels behind a PyPTO orchestration: ``@pl.function(type=AIV, external_source=...)``
in a ``@pl.program``, launched on blocks with ``with pl.spmd(core_num=N):``, compiled by the simulator
with the host compiler and compared exactly with torch."""

import textwrap

import pypto.language as pl
import pytest
import torch
from pypto.testing import ScalarSpec, TensorSpec, allclose, run

ROWS = 4
COLS = 8

# Block b writes `scale * (b + 1)` over row b; row 0 is left to the initial value when b == 0 is skipped
# (here no block is skipped, so every row is written). The width comes from a header next to it.
_KERNEL = """
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"
#include "include/width.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int64_t scale = args[1];
  const int32_t block = get_block_idx(args);
  for (int32_t j = 0; j < kWidth; ++j) out[block * kWidth + j] = static_cast<float>(scale * (block + 1) + j);
}
"""


def _write_kernel(directory, body=_KERNEL):
    (directory / "include").mkdir(exist_ok=True)
    (directory / "include" / "width.h").write_text(f"#pragma once\nstatic constexpr int kWidth = {COLS};\n")
    source = directory / "rows.cpp"
    source.write_text(textwrap.dedent(body))
    return source


def _program(source):
    @pl.program
    class RowsProgram:
        @pl.function(type=pl.FunctionType.AIV, external_source=source)
        def ROWS_AIV(self, out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
                     scale: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, COLS], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            with pl.spmd(core_num=ROWS):
                out = self.ROWS_AIV(out, 3)
            return out

    return RowsProgram


def test_extern_kernel_on_blocks_matches_torch(tmp_path):
    program = _program(_write_kernel(tmp_path))
    text = str(program)
    assert "external_source=" in text and "with pl.spmd(core_num=4):" in text

    def golden(values):
        block = torch.arange(ROWS, dtype=torch.float32).unsqueeze(1)
        col = torch.arange(COLS, dtype=torch.float32).unsqueeze(0)
        values["out"].copy_(3 * (block + 1) + col)

    result = run(program, [TensorSpec("out", [ROWS, COLS], torch.float32, init_value=-1.0)], golden,
                 compare={"out": allclose(rtol=0, atol=0)})
    assert result.passed, result.error


def test_kernel_config_lists_the_extern_kernel(tmp_path):
    from pypto.ir import compile as ir_compile

    source = _write_kernel(tmp_path)
    compiled = ir_compile(_program(source), platform="a2a3sim", output_dir=str(tmp_path / "build"))
    config = (tmp_path / "build" / "kernel_config.py").read_text()
    assert f'"source": "{source}"' in config and '"external": True' in config, config
    assert compiled is not None


def test_missing_source_is_reported(tmp_path):
    with pytest.raises(Exception, match="missing.cpp"):
        _program(tmp_path / "missing.cpp")


def test_compile_error_gives_the_compilers_message(tmp_path):
    source = _write_kernel(tmp_path, 'extern "C" void kernel_entry(long* args) { not_declared(args); }\n')
    result = run(_program(source), [TensorSpec("out", [ROWS, COLS], torch.float32)],
                 lambda values: None)
    assert not result.passed
    assert "not_declared" in result.error and str(source) in result.error, result.error


def test_compile_only_builds_the_kernel_and_reports_its_compile_error(tmp_path):
    bad = _write_kernel(tmp_path, 'extern "C" void kernel_entry(long* args) { not_declared(args); }\n')
    result = run(_program(bad), [TensorSpec("out", [ROWS, COLS], torch.float32)], compile_only=True)
    assert not result.passed
    assert result.error.startswith("compile failed: ") and "not_declared" in result.error, result.error

    good = _write_kernel(tmp_path)
    result = run(_program(good), [TensorSpec("out", [ROWS, COLS], torch.float32)], lambda values: None,
                 compile_only=True)
    assert result.passed, result.error
    assert result.outputs == {}  # nothing ran


def test_a_missing_include_names_the_header_and_the_source(tmp_path):
    source = _write_kernel(tmp_path, '#include "tiling/nope.h"\nextern "C" void kernel_entry(long* args) { (void)args; }\n')
    result = run(_program(source), [TensorSpec("out", [ROWS, COLS], torch.float32)], compile_only=True)
    assert not result.passed
    assert "tiling/nope.h" in result.error and str(source) in result.error, result.error
