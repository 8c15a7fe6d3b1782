"""Tensor slices that orchestration code passes to kernels (upstream's paged attention: a block of the
KV cache at a row read from the block table, a window of the output): views of the tensor at offsets
computed per iteration, which the kernels read and write in place. Also tensors whose shape is read
from a config tensor, which take the shape of the kernel parameter they are passed to. Checked against
torch, in the generated C++, and the errors for a view outside its tensor and for a run-time shape no
kernel gives."""

import pytest
import torch

import pypto.ir
import pypto.language as pl
import pypto.runtime


@pl.function(type=pl.FunctionType.InCore)
def scale_block(x: pl.Tensor[[16, 32], pl.FP32], s: pl.Scalar[pl.FP32],
                out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 32])
    out = pl.store(pl.mul(t, s), [0, 0], out)
    return out


@pl.function(type=pl.FunctionType.InCore)
def zero(acc: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    acc = pl.store(pl.full([16, 32], dtype=pl.FP32, value=0.0), [0, 0], acc)
    return acc


@pl.function(type=pl.FunctionType.InCore)
def accumulate(a: pl.Tensor[[16, 32], pl.FP32],
               acc: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    total = pl.add(pl.load(a, [0, 0], [16, 32]), pl.load(acc, [0, 0], [16, 32]))
    acc = pl.store(total, [0, 0], acc)
    return acc


@pl.program
class RowBlocks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for b in pl.range(4):
            xi = pl.slice(x, [16, 32], [b * 16, 0])
            yi = y[b * 16 : b * 16 + 16, :]
            yi = scale_block(xi, 3.0, yi)
        return y


def test_slices_at_loop_offsets_are_views_the_kernels_read_and_write():
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    pypto.runtime.run(RowBlocks, x, y)
    torch.testing.assert_close(y, x * 3.0)


def test_a_slice_is_the_runtime_view_of_its_window():
    compiled = pypto.ir.compile(RowBlocks, platform="a2a3sim")
    source = compiled._artifacts.orchestration_source
    assert ("        uint32_t xi_shapes[2] = {16, 32};\n"
            "        uint32_t xi_offsets[2] = {static_cast<uint32_t>((b * 16)), 0};\n"
            "        const ChipTensor xi = ext_x.view(xi_shapes, xi_offsets);\n") in source, source


# The paged-attention pattern: blocks of a cache gathered through a table, into an accumulator and
# a window of the output whose shapes are read from a config tensor.
@pl.program
class GatherBlocks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, cache: pl.Tensor[[128, 32], pl.FP32], table: pl.Tensor[[4], pl.INT32],
             config: pl.Tensor[[2], pl.INT64],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        rows = pl.tensor.read(config, [0])
        width = pl.tensor.read(config, [1])
        for b in pl.range(2):
            acc = pl.create_tensor([rows, width], dtype=pl.FP32)
            acc = zero(acc)
            for j in pl.range(2):
                block = pl.tensor.read(table, [b * 2 + j])
                src = pl.slice(cache, [rows, width], [block * 16, 0])
                tmp = pl.create_tensor([rows, width], dtype=pl.FP32)
                tmp = scale_block(src, 2.0, tmp)
                acc = accumulate(tmp, acc)
            dst = pl.slice(out, [rows, width], [b * 16, 0])
            dst = scale_block(acc, 1.0, dst)
        return out


@pytest.mark.parametrize("table", [[3, 0, 7, 5], [1, 1, 6, 2]])
def test_views_at_offsets_read_from_a_table(table):
    cache, out = torch.randn(128, 32), torch.zeros(32, 32)
    table = torch.tensor(table, dtype=torch.int32)
    pypto.runtime.run(GatherBlocks, cache, table, torch.tensor([16, 32]), out)
    blocks = cache.view(8, 16, 32)
    expected = torch.cat([2 * (blocks[table[0]] + blocks[table[1]]), 2 * (blocks[table[2]] + blocks[table[3]])])
    torch.testing.assert_close(out, expected)


def test_a_shape_read_at_run_time_takes_the_kernel_parameters():
    text = str(GatherBlocks)
    assert "acc: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)" in text, text
    assert "src: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.slice(cache, [16, 32], [block * 16, 0])" in text, text
    rows = str(RowBlocks)  # the slices only kernels take are views, and no load is left
    assert "xi: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.slice(x, [16, 32], [b * 16, 0])" in rows, rows
    assert "load" not in rows.split("def main")[1].split("@pl.function")[0], rows


def test_a_view_outside_its_tensor_is_reported_with_the_iteration():
    table = torch.tensor([3, 0, 8, 5], dtype=torch.int32)  # block 8 starts at row 128, past the cache
    with pytest.raises(Exception) as info:
        pypto.runtime.run(GatherBlocks, torch.zeros(128, 32), table, torch.tensor([16, 32]), torch.zeros(32, 32))
    message = str(info.value)
    assert "the slice 'src' at offset 128 of size 16 is outside its tensor's extent 128 in dimension 0 " \
           "(when b = 1, j = 0)" in message, message


def test_a_run_time_shape_no_kernel_takes_is_reported(write_kernel, tmp_path):
    with pytest.raises(Exception) as info:
        write_kernel("unused_shape", """
import pypto.language as pl

@pl.program
class Unused:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, config: pl.Tensor[[1], pl.INT64], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        n = pl.tensor.read(config, [0])
        buf = pl.create_tensor([16, n], dtype=pl.FP32)
        return y
""")
    message, path = str(info.value), tmp_path / "unused_shape.py"
    assert "'buf' has a shape known only at run time with no bound the compiler can find; such a tensor takes the " \
           "shape of the kernel parameter it is passed to, and no function call after it passes 'buf'" in message, message
    assert f"{path}:9:15" in message, message


# Upstream's multi-config paged attention slices n_unroll block-table entries at each group's start,
# the last group's window running past the table's end; its kernels read only the entries that exist.
@pl.function(type=pl.FunctionType.InCore)
def sum_blocks(cache: pl.Tensor[[128, 32], pl.FP32], entries: pl.Tensor[[4], pl.INT32], n: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
    for i in pl.range(n):
        block = pl.read(entries, i)
        acc = pl.add(acc, pl.load(cache, [block * 16, 0], [16, 32]))
    out = pl.store(acc, [0, 0], out)
    return out


@pl.program
class BlockGroups:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, cache: pl.Tensor[[128, 32], pl.FP32], table: pl.Tensor[[6], pl.INT32],
             config: pl.Tensor[[1], pl.INT64],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        last = pl.tensor.read(config, [0])  # entries the last group reads
        for g in pl.range(2):
            entries = pl.slice(table, [4], [g * 4])
            n = pl.min(4, 6 - g * 4 + last - 2)
            dst = pl.slice(out, [16, 32], [g * 16, 0])
            dst = sum_blocks(cache, entries, n, dst)
        return out


def test_a_view_may_run_past_the_end_of_its_table():
    cache, out = torch.randn(128, 32), torch.zeros(32, 32)
    table = torch.tensor([3, 0, 7, 5, 1, 6], dtype=torch.int32)
    pypto.runtime.run(BlockGroups, cache, table, torch.tensor([2]), out)
    blocks = cache.view(8, 16, 32)
    torch.testing.assert_close(out, torch.cat([blocks[table[:4]].sum(0), blocks[table[4:]].sum(0)]))


@pl.program
class ShortTable:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, cache: pl.Tensor[[128, 32], pl.FP32], table: pl.Tensor[[3], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        entries = pl.slice(table, [4], [0])  # wider than the whole table: a view, never a load
        out = sum_blocks(cache, entries, 3, out)
        return out


def test_a_view_may_be_wider_than_its_whole_table():
    assert "entries: pl.Tensor[[4], pl.INT32] = pl.tensor.slice(table, [4], [0])" in str(ShortTable), str(ShortTable)
    cache, out = torch.randn(128, 32), torch.zeros(16, 32)
    table = torch.tensor([6, 2, 5], dtype=torch.int32)
    pypto.runtime.run(ShortTable, cache, table, out)
    torch.testing.assert_close(out, cache.view(8, 16, 32)[table].sum(0))


def test_a_view_starting_past_the_end_of_its_table_is_an_error(write_kernel, tmp_path):
    with pytest.raises(Exception) as info:
        write_kernel("past_table", """
import pypto.language as pl

@pl.program
class PastTable:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, table: pl.Tensor[[3], pl.INT32], out: pl.Out[pl.Tensor[[4], pl.INT32]]) -> pl.Tensor[[4], pl.INT32]:
        entries = pl.slice(table, [4], [3])
        return out
""")
    message, path = str(info.value), tmp_path / "past_table.py"
    assert "region at offsets [3] with shape [4] is outside tensor pl.Tensor[[3], pl.INT32] (dimension 0)" \
        in message, message
    assert f"{path}:8:19" in message, message


def test_a_kernel_reading_past_the_end_of_a_table_is_reported():
    table = torch.tensor([3, 0, 7, 5, 1, 6], dtype=torch.int32)
    with pytest.raises(Exception) as info:  # the last group reads 3 entries where 2 exist
        pypto.runtime.run(BlockGroups, torch.zeros(128, 32), table, torch.tensor([3]), torch.zeros(32, 32))
    message = str(info.value)
    assert "kernel 'sum_blocks' instruction #2 (read) `block = pl.tensor.read(entries, [i])`" in message, message
    assert "out-of-bounds global read of tensor 'entries' (args[1]): bytes [24, 28)" in message, message
    assert "but the buffer holds 24 bytes" in message, message


def test_a_kernel_reading_its_table_gets_a_pto_module(tmp_path):
    pypto.ir.compile(BlockGroups, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    pto = (tmp_path / "out" / "kernels" / "aiv" / "sum_blocks.pto").read_text()
    lines = [line.split(" loc(")[0].strip() for line in pto.splitlines()]
    start = lines.index("%1 = pto.load_scalar %arg1[%i] : !pto.ptr<i32> -> i32")
    assert lines[start:start + 3] == ["%1 = pto.load_scalar %arg1[%i] : !pto.ptr<i32> -> i32",
                                      "%block = arith.index_cast %1 : i32 to index",
                                      "%2 = arith.muli %block, %c16_index : index"], pto
