"""A hand-written kernel's tensors sit between guard pages (plugins/sim/src/extern_guard_pages.h): a
write one element past a tensor's end faults at once and fails the run naming the kernel, the tensor
and the byte offset, where it once "succeeded" and the process died later with `double free or
corruption` (issue 32). A write just before the start is found when the kernel returns. Blocks that
share a tensor still see each other's writes and their results reach the caller."""

import textwrap

import pypto.language as pl
import torch
from pypto.testing import TensorSpec, run

ROWS = 4
COLS = 8

_HEADER = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
"""

# Each block writes its row of `out`; the last block writes one element more, past the end.
_ONE_PAST_THE_END = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int64_t block = get_block_idx(args);
  const int64_t count = block == 3 ? 9 : 8;
  for (int64_t j = 0; j < count; ++j) out[block * 8 + j] = static_cast<float>(args[1]);
}
"""

# Block 0 writes the element before its first one.
_ONE_BEFORE_THE_START = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int64_t block = get_block_idx(args);
  for (int64_t j = block == 0 ? -1 : 0; j < 8; ++j) out[block * 8 + j] = static_cast<float>(args[1]);
}
"""

# Row b of `out` is the sum of rows 0..b of `x`: block b waits until block b - 1 has set the last
# column of its row, then adds its row of `x` to that row. The blocks see each other's writes only
# if they share one copy of `out`; each writes its own row, so they do not race.
_IN_TURN = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* x_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  const float* x = reinterpret_cast<const float*>(x_tensor->buffer.addr) + x_tensor->start_offset;
  volatile float* out = reinterpret_cast<volatile float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int64_t block = get_block_idx(args);
  volatile float* row = out + block * 8;
  if (block > 0) while (row[-1] != 1.0f) {}  // the last column of the row before: done
  for (int j = 0; j < 7; ++j) row[j] = (block > 0 ? row[j - 8] : 0.0f) + x[block * 8 + j];
  row[7] = 1.0f;
}
"""


def _program(source):
    @pl.program
    class Guarded:
        @pl.function(type=pl.FunctionType.AIV, external_source=source)
        def KERNEL(self, out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
                   value: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, COLS], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            with pl.spmd(core_num=ROWS):
                out = self.KERNEL(out, 3)
            return out

    return Guarded


def _run(tmp_path, name, body):
    source = tmp_path / f"{name}.cpp"
    source.write_text(textwrap.dedent(body))
    return run(_program(source), [TensorSpec("out", [ROWS, COLS], torch.float32, init_value=0.0)],
               lambda values: values["out"].fill_(3.0))


def test_a_write_one_element_past_the_end_names_the_tensor_and_offset(tmp_path):
    result = _run(tmp_path, "one_past_the_end", _ONE_PAST_THE_END)
    assert not result.passed
    assert "fatal error 203 (KernelFailed): hand-written kernel 'KERNEL' (task " in result.error, result.error
    assert ("wrote past the end of tensor 'out' (args[0], FLOAT32 [4, 8], 128 bytes): byte 128 of its buffer, "
            "0 bytes past its last byte (element 32 of 32); a kernel writes only inside the tensors it is "
            "given") in result.error, result.error


def test_a_write_before_the_start_is_found_when_the_kernel_returns(tmp_path):
    result = _run(tmp_path, "one_before_the_start", _ONE_BEFORE_THE_START)
    assert not result.passed
    assert ("wrote before the start of tensor 'out' (args[0], FLOAT32 [4, 8], 128 bytes): byte -4 of its buffer, "
            "4 bytes before its first byte (element -1 of 32), found when the kernel returned; a kernel writes "
            "only inside the tensors it is given") in result.error, result.error


def test_blocks_share_a_guarded_tensor_and_the_caller_gets_their_writes(tmp_path):
    source = tmp_path / "in_turn.cpp"
    source.write_text(textwrap.dedent(_IN_TURN))

    @pl.program
    class InTurn:
        @pl.function(type=pl.FunctionType.AIV, external_source=source)
        def KERNEL(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
                 out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            with pl.spmd(core_num=ROWS):
                out = self.KERNEL(x, out)
            return out

    def golden(values):
        values["out"][:, :COLS - 1] = values["x"][:, :COLS - 1].cumsum(0)
        values["out"][:, COLS - 1] = 1.0

    result = run(InTurn, [TensorSpec("x", [ROWS, COLS], torch.float32, init_value=torch.randn(ROWS, COLS)),
                          TensorSpec("out", [ROWS, COLS], torch.float32, init_value=0.0)], golden)
    assert result.passed, result.error
