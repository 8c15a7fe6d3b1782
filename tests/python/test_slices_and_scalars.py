"""Tensor slices inside kernels (loads and stores of regions) and Python numbers passed for scalar
parameters (specialisation constants), checked against torch."""

import pytest
import torch
from conftest import is_poison, kernels_fixture, unwritten

import pypto.language as pl

KERNELS = '''
import pypto.language as pl

ROWS = 256
COLS = 128
TILE = 64


@pl.jit
def add_scalar(x: pl.Tensor[[ROWS, COLS], pl.FP32], a: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(0, ROWS, TILE):
            for c in pl.range(0, COLS, TILE):
                y[r : r + TILE, c : c + TILE] = pl.add(x[r : r + TILE, c : c + TILE], a)
    return y


@pl.jit
def first_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:16] = pl.mul(x[16:32], 2.0)
    return y


@pl.jit
def two_stages(x: pl.Tensor, scratch: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage1"):
        scratch[:] = pl.add(x, x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage2"):
        out[:] = pl.mul(scratch, pl.exp(scratch))
    return scratch, out


@pl.jit
def bad_slice(x: pl.Tensor, n: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(n):
            y[0:i] = x[0:16]
    return y
'''


kernels = kernels_fixture("slice_kernels.py", KERNELS)


def test_slices_in_loops_with_a_scalar_argument(kernels):
    x = torch.randn(256, 128)
    y = torch.zeros_like(x)
    kernels.add_scalar(x, 1.5, y)
    torch.testing.assert_close(y, x + 1.5, rtol=1e-6, atol=1e-6)
    kernels.add_scalar(x, -3.0, y)
    torch.testing.assert_close(y, x - 3.0, rtol=1e-6, atol=1e-6)


def test_each_scalar_value_is_its_own_specialisation(kernels):
    x, y = torch.randn(256, 128), torch.zeros(256, 128)
    kernels.add_scalar.clear_cache()
    assert kernels.add_scalar.compile(x, 2.0, y) is kernels.add_scalar.compile(x, 2.0, y)
    assert kernels.add_scalar.compile(x, 2.0, y) is not kernels.add_scalar.compile(x, 4.0, y)
    assert "pl.tile.adds(" in str(kernels.add_scalar.lower(x, 2.0, y)) and ", 2.0)" in str(
        kernels.add_scalar.lower(x, 2.0, y)
    )


def test_open_slices_cover_whole_dimensions(kernels):
    x = torch.randn(32, 8)
    y = torch.full((16, 8), -1.0)
    kernels.first_rows(x, y)
    torch.testing.assert_close(y, x[16:32] * 2.0)


def test_a_slice_size_must_be_static(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    with pytest.raises(ParserTypeError) as error:
        kernels.bad_slice(torch.zeros(16, 4), 4, torch.zeros(16, 4))
    message = str(error.value)
    assert "the slice 0:i must have a size known at compile time" in message
    assert f"--> {kernels.path}:38:15" in message


def test_whole_tensors_in_kernels_are_loaded_and_stages_are_ordered(kernels):
    x = torch.randn(64, 64)
    scratch, out = torch.zeros(64, 64), torch.zeros(64, 64)
    kernels.two_stages(x, scratch, out)
    torch.testing.assert_close(scratch, 2 * x)
    torch.testing.assert_close(out, 2 * x * torch.exp(2 * x), rtol=1e-5, atol=1e-5)


READS = """
import pypto.language as pl

T = 16


@pl.jit
def gather_scale(x: pl.Tensor[[T, 64], pl.FP32], w: pl.Tensor[[T, 4], pl.FP32], idx: pl.Tensor[[T], pl.INT32],
                 y: pl.Out[pl.Tensor[[T, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for t in pl.range(T):
            k = pl.read(idx, t)  # one index of a 1-D tensor needs no list
            s = pl.read(w, [t, k])
            y[t : t + 1, 0:64] = pl.mul(x[t : t + 1, 0:64], s)
    return y


@pl.jit
def half_read(x: pl.Tensor[[T, 64], pl.FP16], y: pl.Out[pl.Tensor[[T, 64], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.read(x, [0, 0])
        y[0:T, 0:64] = pl.mul(x[0:T, 0:64], s)
    return y


@pl.jit
def short_index(x: pl.Tensor[[T, 64], pl.FP32], y: pl.Out[pl.Tensor[[T, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.read(x, [0])
        y[0:T, 0:64] = pl.mul(x[0:T, 0:64], s)
    return y
"""


def test_read_takes_elements_into_scalars_that_index_and_scale(write_kernel):
    module, _ = write_kernel("reads", READS)
    x, w = torch.randn(16, 64), torch.randn(16, 4)
    idx = torch.tensor([3, 0, 2, 1] * 4, dtype=torch.int32)
    y = torch.zeros(16, 64)
    module.gather_scale(x, w, idx, y)
    # One row at a time, each scaled by the weight its index picks.
    torch.testing.assert_close(y, x * w[torch.arange(16), idx.long()].unsqueeze(1), rtol=0, atol=0)


def test_read_errors_name_the_problem(write_kernel):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, _ = write_kernel("reads", READS)
    with pytest.raises(ParserTypeError,
                       match=r"pl.read: an element of pl.Tensor\[\[16, 64\], pl.FP32\] has 2 indices, got 1"):
        module.short_index(torch.zeros(16, 64), torch.zeros(16, 64))


def test_an_fp16_element_read_scales_its_tile(write_kernel):
    module, _ = write_kernel("reads", READS)
    x = torch.randn(16, 64).to(torch.float16)
    y = torch.zeros(16, 64, dtype=torch.float16)
    module.half_read(x, y)
    torch.testing.assert_close(y, x * x[0, 0])


def test_an_index_read_at_run_time_is_bounds_checked(write_kernel):
    module, _ = write_kernel("reads", READS)
    idx = torch.zeros(16, dtype=torch.int32)
    idx[5] = 9  # row 5 asks for column 9 of a 4-column weight
    with pytest.raises(RuntimeError, match=r"out-of-bounds global read: region \[5:6, 9:10\] is outside the view of "
                       r"tensor 'w' \(args\[1\]\) with shape \[16, 4\]"):
        module.gather_scale(torch.randn(16, 64), torch.randn(16, 4), idx, torch.zeros(16, 64))


ASSEMBLES = '''
import pypto.language as pl


@pl.jit
def halves(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        top = pl.load(x, [0, 0], [32, 32])
        bottom = pl.load(x, [32, 0], [32, 32])
        out = pl.assemble(out, pl.mul(bottom, 2.0), [0, 0])
        out = pl.assemble(target=out, source=pl.add(top, 1.0), offset=[32, 0])
    return out


@pl.jit
def in_orchestration(x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[2, 64, 32], pl.FP32]]):
    out = pl.assemble(out, x, [1, 16, 0])
    return out


@pl.jit
def atomically(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.full([16, 32], dtype=pl.FP32, value=1.0), [0, 0])
    for part in pl.parallel(0, 4):
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.load(x, [part * 16, 0], [16, 32]), [0, 0], atomic=pl.AtomicType.Add)
    return out


@pl.jit
def into_a_tile(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        whole = pl.load(x, [0, 0], [64, 32])
        whole = pl.assemble(whole, pl.load(x, [0, 0], [32, 32]), [32, 0])
        pl.store(whole, [0, 0], out)
    return out


@pl.jit
def badly_atomic(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.load(x, [0, 0], [64, 32]), [0, 0], atomic=pl.AtomicType.Max)
    return out


@pl.jit
def atomically_stored(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    for part in pl.parallel(0, 4):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(x, [part * 16, 0], [16, 32]), [0, 0], out, atomic=pl.AtomicType.Add)
    return out
'''


def test_assemble_writes_a_tile_into_the_tensor_at_its_offset(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, out = torch.randn(64, 32), torch.zeros(64, 32)
    module.halves(x, out)
    torch.testing.assert_close(out, torch.cat([x[32:] * 2, x[:32] + 1]))


def test_an_atomic_assemble_adds_into_the_tensor(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, out = torch.randn(64, 32), torch.zeros(16, 32)
    module.atomically(x, out)
    torch.testing.assert_close(out, 1 + x.reshape(4, 16, 32).sum(dim=0))
    # Each atomic add reads what it adds to: the tasks are ordered, and `out` is InOut to each.
    lowered = module.atomically.lower(x, out)
    kernels = [f for f in lowered.functions.values() if f.function_type == "AIV"]
    assert [p["direction"] for p in kernels[1].params if p["name"] == "out"] == ["InOut"]


def test_an_atomic_store_adds_into_the_tensor(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, out = torch.randn(64, 32), torch.ones(16, 32)
    module.atomically_stored(x, out)
    torch.testing.assert_close(out, 1 + x.reshape(4, 16, 32).sum(dim=0))


def test_assemble_in_orchestration_is_a_copy_kernel_and_an_unknown_atomic_says_so(write_kernel):
    from pypto.language.parser.diagnostics import InvalidOperationError

    module, path = write_kernel("assembles", ASSEMBLES)
    x, out = torch.randn(16, 32), torch.zeros(2, 64, 32)
    # The copy kernel writes the assembled window and nothing else of `out`.
    with unwritten("output 'out' [2, 64, 32] float32: 3584 of 4096 elements were never written: all of rows 0; "
                   "part of rows 1 (axis 1: 0..15, 32..63)"):
        module.in_orchestration(x, out)
    assert torch.equal(out[1, 16:32], x)
    assert is_poison(out[0]) and is_poison(out[1, :16]) and is_poison(out[1, 32:])
    x, out = torch.randn(64, 32), torch.zeros(64, 32)
    with pytest.raises(InvalidOperationError) as error:
        module.badly_atomic(x, out)
    assert error.value.message == "'pl.assemble' atomic= takes pl.AtomicType.Add or pl.AtomicType.None_"
    assert error.value.location == f"{path}:43:77"


ORCHESTRATION_COPIES = '''
import pypto.language as pl


@pl.program
class Chunks:
    @pl.function(type=pl.FunctionType.InCore)
    def doubled(self, x: pl.Tensor[[4, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        t: pl.Tile[[4, 16], pl.FP32] = pl.load(x, [0, 0], [4, 16])
        out = pl.store(pl.tile.muls(t, 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[3, 4, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 4, 16], pl.FP32]]) -> pl.Tensor[[3, 4, 16], pl.FP32]:
        for b in pl.range(3):
            chunk: pl.Tensor[[4, 16], pl.FP32] = pl.create_tensor([4, 16], dtype=pl.FP32)
            row: pl.Tensor[[4, 16], pl.FP32] = pl.create_tensor([4, 16], dtype=pl.FP32)
            row = pl.assemble(row, pl.slice(x, [1, 4, 16], [b, 0, 0]), [0, 0])
            chunk = self.doubled(row, chunk)
            out = pl.assemble(out, chunk, [b, 0, 0])
        return out
'''


def test_assembles_in_orchestration_copy_each_chunk_into_its_window(write_kernel, tmp_path):
    import pypto.ir

    module, _ = write_kernel("orchestration_copies", ORCHESTRATION_COPIES)
    compiled = pypto.ir.compile(module.Chunks, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    x, out = torch.randn(3, 4, 16), torch.zeros(3, 4, 16)
    compiled(x, out)
    assert torch.equal(out, x * 2)


def test_assemble_into_a_tile_writes_its_window(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, out = torch.randn(64, 32), torch.zeros(64, 32)
    module.into_a_tile(x, out)
    expected = x.clone()
    expected[32:] = x[:32]
    torch.testing.assert_close(out, expected)


SCALAR_CASTS = '''
import pypto.language as pl


@pl.jit
def pick_rows(x: pl.Tensor[[16, 8], pl.FP32], order: pl.Tensor[[4], pl.INT32],
              y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            raw: pl.Scalar[pl.INT32] = pl.read(order, i)
            row: pl.Scalar[pl.INDEX] = pl.cast(raw, pl.INDEX)
            y[i : i + 1, :] = pl.load(x, [row, 0], [1, 8])
    return y


@pl.jit
def narrowing(x: pl.Tensor[[16, 8], pl.FP32], order: pl.Tensor[[4], pl.INT64],
              y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        row = pl.cast(pl.read(order, 0), pl.INT32)
        y[0:1, :] = pl.load(x, [row, 0], [1, 8])
    return y


@pl.jit
def float_casts(x: pl.Tensor[[16, 8], pl.FP32], marks: pl.Tensor[[1, 8], pl.FP32],
                y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    # decode_sparse_attn's `pl.cast(pl.read(row_max_tile, [t, 0]), target_type=pl.INT32)`: an FP32
    # element as an integer (toward zero), and back to FP32 as a tile-scalar operand.
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.load(marks, [0, 0], [1, 8])
        for i in pl.range(4):
            row = pl.cast(pl.read(m, [0, i]), target_type=pl.INT32)
            scaled = pl.mul(pl.load(x, [row, 0], [1, 8]), pl.cast(row, pl.FP32))
            y[i : i + 1, :] = pl.add(scaled, pl.cast(0.5, pl.FP32))  # an FP32 cast to FP32 is itself
    return y


@pl.jit
def counted(x: pl.Tensor[[16, 8], pl.FP32], marks: pl.Tensor[[1, 8], pl.INT32],
            y: pl.Out[pl.Tensor[[1, 8], pl.FP32]]):
    # decode_sparse_attn_hca's `pl.cast(g_first >= 0, pl.INT32)`: a comparison as a 0/1 integer.
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.load(marks, [0, 0], [1, 8])
        count = pl.cast(0, pl.INT32)
        for i in pl.range(8):
            count = count + pl.cast(pl.read(m, [0, i]) >= 0, pl.INT32)
        y[0:1, :] = pl.load(x, [count, 0], [1, 8])
    return y


@pl.jit
def of_a_float(x: pl.Tensor[[16, 8], pl.FP32], s: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        k = pl.cast(s, pl.INDEX)
        y[0:16, :] = pl.load(x, [0, 0], [16, 8])
    return y
'''


def test_a_scalar_cast_turns_a_read_index_into_an_offset(write_kernel):
    module, _ = write_kernel("scalar_casts", SCALAR_CASTS)
    x, order, y = torch.randn(16, 8), torch.tensor([5, 0, 15, 7], dtype=torch.int32), torch.zeros(4, 8)
    module.pick_rows(x, order, y)
    torch.testing.assert_close(y, x[order.long()])
    # The cast prints as pl.scalar.cast and parses back: the build directory runs again on its own.
    from pathlib import Path

    from pypto.runtime import execute_compiled

    compiled = module.pick_rows.compile(x, order, y)
    lowered = (Path(compiled.output_dir) / "lowered_program.py").read_text()
    assert "row: pl.Scalar[pl.INDEX] = pl.scalar.cast(raw, target_type=pl.INDEX)" in lowered
    again = torch.zeros(4, 8)
    execute_compiled(compiled.output_dir, [x, order, again])
    torch.testing.assert_close(again, y)


def test_narrowing_scalar_casts_wrap_as_on_a_device(write_kernel):
    module, _ = write_kernel("scalar_casts", SCALAR_CASTS)
    x, y = torch.randn(16, 8), torch.zeros(4, 8)
    # 2**32 + 5 keeps its low 32 bits, 5, as an INT32.
    module.narrowing(x, torch.tensor([2**32 + 5, 0, 0, 0], dtype=torch.int64), y)
    torch.testing.assert_close(y[0], x[5], rtol=0, atol=0)


def test_an_fp32_element_cast_to_int32_rounds_toward_zero_and_casts_back(write_kernel):
    module, _ = write_kernel("scalar_casts", SCALAR_CASTS)
    x = torch.randn(16, 8)
    marks = torch.tensor([[3.7, 0.2, 15.9, 7.0, -0.5, 0.0, 0.0, 0.0]])
    y = torch.zeros(4, 8)
    module.float_casts(x, marks, y)
    rows = [3, 0, 15, 7]
    torch.testing.assert_close(y, torch.stack([x[r] * r + 0.5 for r in rows]), rtol=0, atol=0)


def test_a_scalar_cast_between_fp32_and_index_is_refused(write_kernel):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_kernel("scalar_casts", SCALAR_CASTS)
    with pytest.raises(ParserTypeError) as error:
        module.of_a_float(torch.randn(16, 8), 2.0, torch.zeros(16, 8))
    assert error.value.message == ("pl.cast: a scalar cast converts between integer dtypes, from BOOL to an "
                                   "integer, or between an integer and FP32; got pl.Scalar[pl.FP32] to INDEX")
    assert error.value.hint == "cast through INT64: pl.cast(pl.cast(x, pl.INT64), ...)"
    assert error.value.location == f"{path}:55:13"


def test_a_comparison_cast_to_an_integer_counts_as_0_or_1(write_kernel):
    module, _ = write_kernel("scalar_casts", SCALAR_CASTS)
    x, y = torch.randn(16, 8), torch.zeros(1, 8)
    marks = torch.tensor([[3, -1, 0, 7, -5, 2, -2, 9]], dtype=torch.int32)  # five are >= 0
    module.counted(x, marks, y)
    torch.testing.assert_close(y, x[5:6], rtol=0, atol=0)


STORE_SHAPES = '''
import pypto.language as pl


@pl.jit
def whole(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.store(pl.load(x, [0, 0], [16, 32]), [16, 0], y, [16, 32])
    return y


@pl.jit
def part(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.store(pl.load(x, [0, 0], [16, 32]), [16, 0], y, [8, 32])
    return y


@pl.jit
def one_each(x: pl.Tensor[[16, 1], pl.FP32], y: pl.Out[pl.Tensor[[16, 1], pl.FP32]]):
    # gate.py's `pl.tile.store(inv_rms, [tok, 0], buf, shapes=[1, 1])`: the first element of the
    # tile into row tok, the tile reaching past the tensor's end.
    with pl.at(level=pl.Level.CORE_GROUP):
        for tok in pl.range(16):
            t = pl.load(x, [tok, 0], [1, 1])
            padded = pl.col_expand(pl.full([8, 1], dtype=pl.FP32, value=0.0), pl.add(t, 1.0))
            pl.tile.store(padded, [tok, 0], y, shapes=[1, 1])
    return y


@pl.jit
def too_big(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.store(pl.load(x, [0, 0], [16, 32]), [16, 0], y, [8, 64])
    return y
'''


def test_a_store_writes_the_corner_its_shapes_name(write_kernel):
    module, _ = write_kernel("store_shapes", STORE_SHAPES)
    x, y = torch.randn(16, 32), torch.zeros(32, 32)
    with unwritten("output 'y' [32, 32] float32: 512 of 1024 elements were never written: all of rows 0..15"):
        module.whole(x, y)
    assert torch.equal(y[16:], x) and is_poison(y[:16])
    y = torch.zeros(32, 32)
    with unwritten("output 'y' [32, 32] float32: 768 of 1024 elements were never written: all of rows 0..15, 24..31"):
        module.part(x, y)
    assert torch.equal(y[16:24], x[:8]) and is_poison(y[:16]) and is_poison(y[24:])
    col, out = torch.randn(16, 1), torch.zeros(16, 1)
    module.one_each(col, out)
    torch.testing.assert_close(out, col + 1.0, rtol=0, atol=0)


def test_a_store_shape_beyond_the_tile_is_an_error(write_kernel):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_kernel("store_shapes", STORE_SHAPES)
    with pytest.raises(ParserTypeError) as error:
        module.too_big(torch.randn(16, 32), torch.zeros(32, 32))
    assert error.value.message == ("pl.store: pl.store shapes=[8, 64] is not a corner of the pl.Tile[[16, 32], "
                                   "pl.FP32, pl.Mem.Vec] tile")
    assert error.value.location == f"{path}:34:13"


@pl.jit
def narrowed_store(x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 8], valid_shape=[16, 4])
        y[0:16, 0:4] = pl.add(t, 1.0)
    return y


def test_a_tile_whose_valid_region_is_the_slice_stores_that_region():
    # The tile is [16, 8] with valid [16, 4]; the slice [16, 4] takes its valid part.
    x = torch.randn(16, 8)
    y = torch.full((16, 8), -7.0)
    with unwritten("output 'y' [16, 8] float32: 64 of 128 elements were never written: part of rows 0..15 "
                   "(columns 4..7)"):
        narrowed_store(x, y)
    torch.testing.assert_close(y[:, :4], x[:, :4] + 1.0)
    assert is_poison(y[:, 4:])


SHIFTS = '''
import pypto.language as pl


@pl.jit
def shifted_windows(x: pl.Tensor[[8, 64], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.FP32]],
                    z: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[:, i * 8 : i * 8 + 8] = x[:, (1 << (i + 2)) : (1 << (i + 2)) + 8]
    with pl.at(level=pl.Level.CORE_GROUP):
        for j in pl.range(4):
            z[:, j * 8 : j * 8 + 8] = x[:, (48 >> j) : (48 >> j) + 8]
    return y, z


@pl.jit
def negative_shift(x: pl.Tensor[[8, 64], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = x[:, (1 << -1) : (1 << -1) + 8]
    return y
'''


def test_shifts_compute_offsets_in_orchestration_and_in_kernels(write_kernel):
    module, _ = write_kernel("shifts", SHIFTS)
    x = torch.randn(8, 64)
    y, z = torch.empty(8, 32), torch.empty(8, 32)
    module.shifted_windows(x, y, z)
    assert torch.equal(y, torch.cat([x[:, (1 << (i + 2)) : (1 << (i + 2)) + 8] for i in range(4)], dim=1))
    assert torch.equal(z, torch.cat([x[:, (48 >> j) : (48 >> j) + 8] for j in range(4)], dim=1))


def test_a_negative_shift_count_is_refused_at_the_shift(write_kernel):
    from pypto.language.parser.diagnostics import InvalidOperationError

    module, path = write_kernel("shifts", SHIFTS)
    with pytest.raises(InvalidOperationError) as error:
        module.negative_shift(torch.randn(8, 64), torch.empty(8, 8))
    assert error.value.message == "shift count -1 is out of range; it must be in [0, 64)"
    assert error.value.location == f"{path}:20:25"
