"""Races between the blocks of one launch: they run side by side in no set order, so two blocks
writing the same elements of a tensor, or one writing what another reads, fail the run with the
launch, the blocks, the tensor and the elements, as a race between the two lanes of a dual-dispatched
kernel does. Blocks ordered by a syncall, blocks writing their own parts, and blocks writing the same
values are not races. A scatter by index is checked where its indices put each element. A
hand-written kernel's writes are found by comparing its tensors before and after each block."""

import pytest
import torch

KERNELS = """
import pypto.language as pl


@pl.jit
def same_rows(x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    for b in pl.spmd(4):
        t = pl.load(x, [b * 8, 0], [8, 64])
        pl.store(t, [8, 0], y)
    return y


@pl.jit
def same_values(x: pl.Tensor[[32, 64], pl.FP32], y: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]):
    for b in pl.spmd(4):
        t = pl.load(x, [0, 0], [8, 64])
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def neighbours_rows(y: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]):
    for b in pl.spmd(4):
        t = pl.load(y, [((b + 1) % 4) * 8, 0], [8, 64])
        pl.store(pl.add(t, 1.0), [b * 8, 0], y)
    return y


@pl.jit
def own_rows(x: pl.Tensor[[32, 64], pl.FP32], y: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]):
    for b in pl.spmd(4):
        t = pl.load(y, [b * 8, 0], [8, 64])
        u = pl.load(x, [b * 8, 0], [8, 64])
        pl.store(pl.add(t, u), [b * 8, 0], y)
    return y


@pl.jit
def scatter_rows(src: pl.Tensor[[4, 32], pl.FP32], idx: pl.Tensor[[4, 32], pl.INT32],
                 out: pl.InOut[pl.Tensor[[128], pl.FP32]]):
    for b in pl.spmd(4):
        out = pl.mscatter(pl.load(src, [b, 0], [1, 32]), pl.load(idx, [b, 0], [1, 32]), out)
    return out
"""


# Each block writes row `row(block)` of `out` with block + 1.
EXTERN = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int32_t block = get_block_idx(args);
  const int32_t row = ROW;
  for (int j = 0; j < 8; ++j) out[row * 8 + j] = static_cast<float>(block + 1);
}
"""

EXTERN_KERNELS = """
import pypto.language as pl


@pl.jit.extern(core_type="aiv", source="own.cpp")
def own_row(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]: ...


@pl.jit.extern(core_type="aiv", source="first.cpp")
def first_row(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]: ...


@pl.jit
def own(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.spmd(4):
        out = own_row(out)
    return out


@pl.jit
def first(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.spmd(4):
        out = first_row(out)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("spmd_block_races", KERNELS)
    return module


@pytest.fixture
def externs(write_kernel, tmp_path):
    (tmp_path / "own.cpp").write_text(EXTERN.replace("ROW", "block"))
    (tmp_path / "first.cpp").write_text(EXTERN.replace("ROW", "0"))
    module, _ = write_kernel("spmd_extern_races", EXTERN_KERNELS)
    return module


def test_two_blocks_writing_the_same_rows_are_a_race(kernels):
    with pytest.raises(RuntimeError) as info:
        kernels.same_rows(torch.randn(32, 64), torch.zeros(32, 64))
    assert (
        "fatal error 203 (KernelFailed): data race between the blocks of one launch: in the launch of kernel "
        "'same_rows_incore_0' (task 0), blocks 0 and 1 both wrote tensor 'y' (args[1]), within elements [512, 1024) "
        "of its buffer. The blocks of a launch run side by side in no set order: each block must write its own "
        "part, chosen by its block index, and read only what no other block of the launch writes (hand a result "
        "to other blocks through a later launch)"
    ) in str(info.value), str(info.value)


def test_blocks_writing_the_same_values_to_the_same_rows_are_not_a_race(kernels):
    # Whatever the order, the rows end up the same.
    x = torch.randn(32, 64)
    y = torch.zeros(32, 64)
    kernels.same_values(x, y)
    torch.testing.assert_close(y[:8], x[:8])


def test_a_block_reading_what_another_writes_is_a_race(kernels):
    with pytest.raises(RuntimeError) as info:
        kernels.neighbours_rows(torch.zeros(32, 64))
    assert (
        "data race between the blocks of one launch: in the launch of kernel 'neighbours_rows_incore_0' (task 0), "
        "block 0 wrote tensor 'y' (args[0]) where block 3 read it, within elements [0, 512) of its buffer."
    ) in str(info.value), str(info.value)


def test_blocks_reading_and_writing_their_own_rows_are_not_a_race(kernels):
    x = torch.randn(32, 64)
    y = torch.randn(32, 64)
    expected = x + y
    kernels.own_rows(x, y)
    torch.testing.assert_close(y, expected)


def test_hand_written_blocks_writing_the_same_row_are_a_race(externs):
    with pytest.raises(RuntimeError) as info:
        externs.first(torch.zeros(4, 8))
    assert (
        "fatal error 203 (KernelFailed): data race between the blocks of one launch: in the launch of kernel "
        "'first_row' (task 0), blocks 0 and 1 both wrote tensor 'out' (args[0]), within elements [0, 8) of its "
        "buffer."
    ) in str(info.value), str(info.value)


def test_hand_written_blocks_writing_their_own_rows_are_not_a_race(externs):
    out = torch.zeros(4, 8)
    externs.own(out)
    torch.testing.assert_close(out, torch.arange(1.0, 5.0).repeat_interleave(8).reshape(4, 8))


# Block b scatters row b of src where row b of idx says: where that is is known only from the indices.
def test_blocks_scattering_to_the_same_elements_are_a_race(kernels):
    src = torch.arange(128, dtype=torch.float32).reshape(4, 32)
    idx = torch.arange(32, dtype=torch.int32).flip(0).repeat(4, 1)  # every block: elements 31..0
    idx[1] = torch.arange(32, 64, dtype=torch.int32)  # block 1 keeps to its own, blocks 0, 2, 3 collide
    with pytest.raises(RuntimeError) as info:
        kernels.scatter_rows(src, idx, torch.zeros(128))
    assert (
        "fatal error 203 (KernelFailed): data race between the blocks of one launch: in the launch of kernel "
        "'scatter_rows_incore_0' (task 0), blocks 0 and 2 both wrote tensor 'out' (args[2]), within elements [0, 1) "
        "of its buffer."
    ) in str(info.value), str(info.value)


def test_blocks_scattering_to_their_own_elements_are_not_a_race(kernels):
    src = torch.randn(4, 32)
    idx = torch.stack([torch.randperm(32, dtype=torch.int32) + 32 * b for b in range(4)])
    out = torch.zeros(128)
    kernels.scatter_rows(src, idx, out)
    expected = torch.zeros(128)
    expected[idx.flatten().long()] = src.flatten()
    torch.testing.assert_close(out, expected)
