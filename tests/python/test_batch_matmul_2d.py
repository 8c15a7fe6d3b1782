"""Batched matmuls of 3-D (and 4-D) tiles inside a kernel: FlattenTileNdTo2D unrolls each into one
2-D matmul per batch (each batch's operands loaded on their own, a matrix shared by every batch read
whole, a matmul_acc chain accumulating each batch in its own product), so the simulators compute
torch.bmm / torch.matmul and backend-ptoas writes the kernel's .pto."""

import warnings
from pathlib import Path

import pytest
import torch
from conftest import kernels_fixture
from pto_dialect import pto_check

from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl


@pl.jit
def bmm(a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32],
        c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [2, 16, 32])
        tb = pl.load(b, [0, 0, 0], [2, 32, 16])
        pl.store(pl.matmul(ta, tb), [0, 0, 0], c)
    return c


@pl.jit
def shared_weight(a: pl.Tensor[[3, 16, 32], pl.FP32], w: pl.Tensor[[32, 48], pl.FP32],
                  c: pl.Out[pl.Tensor[[3, 16, 48], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [3, 16, 32])
        tw = pl.load(w, [0, 0], [32, 48])
        pl.store(pl.matmul(ta, tw), [0, 0, 0], c)
    return c


@pl.jit
def bmm_b_trans(a: pl.Tensor[[2, 16, 64], pl.FP32], b: pl.Tensor[[2, 32, 64], pl.FP32],
                c: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [2, 16, 64])
        tb = pl.load(b, [0, 0, 0], [2, 32, 64])
        pl.store(pl.matmul(ta, tb, b_trans=True), [0, 0, 0], c)
    return c


@pl.jit
def bmm_split_k(a: pl.Tensor[[4, 16, 64], pl.FP16], b: pl.Tensor[[4, 64, 32], pl.FP16],
                c: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 4, 2):
            acc = pl.matmul(pl.load(a, [i, 0, 0], [2, 16, 32]), pl.load(b, [i, 0, 0], [2, 32, 32]))
            acc = pl.matmul_acc(acc, pl.load(a, [i, 0, 32], [2, 16, 32]), pl.load(b, [i, 32, 0], [2, 32, 32]))
            pl.store(acc, [i, 0, 0], c)
    return c


@pl.jit
def bmm_k_loop(a: pl.Tensor[[2, 16, 128], pl.FP16], b: pl.Tensor[[2, 128, 32], pl.FP16],
               c: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(pl.load(a, [0, 0, 0], [2, 16, 32]), pl.load(b, [0, 0, 0], [2, 32, 32]))
        for k in pl.range(32, 128, 32):
            acc = pl.matmul_acc(acc, pl.load(a, [0, 0, k], [2, 16, 32]), pl.load(b, [0, k, 0], [2, 32, 32]))
        pl.store(acc, [0, 0, 0], c)
    return c


@pl.jit
def bmm_4d(a: pl.Tensor[[2, 3, 16, 32], pl.FP32], b: pl.Tensor[[2, 3, 32, 16], pl.FP32],
           c: pl.Out[pl.Tensor[[2, 3, 16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0, 0], [2, 3, 16, 32])
        tb = pl.load(b, [0, 0, 0, 0], [2, 3, 32, 16])
        pl.store(pl.matmul(ta, tb), [0, 0, 0, 0], c)
    return c


@pl.jit
def bmm_of_sum(a: pl.Tensor[[2, 16, 80], pl.FP32], b0: pl.Tensor[[2, 80, 48], pl.FP32],
               b1: pl.Tensor[[2, 80, 48], pl.FP32], c: pl.Out[pl.Tensor[[2, 16, 48], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        bt = pl.add(b0, b1)
        c = pl.assemble(c, pl.matmul(a, bt), [0, 0, 0])
    return c
'''

kernels = kernels_fixture("batch_matmul_kernels.py", KERNELS)

PLATFORMS = ["a2a3sim", "a5sim"]


def _config(platform):
    return RunConfig(platform=platform, dump_passes=True)


def _after_flatten(compiled):
    dumps = Path(compiled.output_dir) / "passes_dump"
    return next(dumps.glob("*_after_FlattenTileNdTo2D.py")).read_text()


def _ptos(compiled):
    return sorted(path.relative_to(Path(compiled.output_dir) / "kernels").as_posix()
                  for path in (Path(compiled.output_dir) / "kernels").rglob("*.pto"))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_each_batch_is_its_own_2d_matmul(kernels, platform):
    torch.manual_seed(11)
    a, b = torch.randn(2, 16, 32), torch.randn(2, 32, 16)
    c = torch.full((2, 16, 16), float("nan"))
    compiled = kernels.bmm.compile(a, b, c, config=_config(platform))
    kernels.bmm(a, b, c, config=_config(platform))
    torch.testing.assert_close(c, torch.bmm(a, b), rtol=1e-4, atol=1e-4)
    text = _after_flatten(compiled)
    assert "ta_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 0], [1, 16, 32])" in text, text
    assert "pl.tile.store(__tmp_v0_b1, [1, 0, 0], c)" in text, text
    assert _ptos(compiled) == ["aic/bmm_incore_0.pto"]
    pto = (Path(compiled.output_dir) / "kernels" / "aic" / "bmm_incore_0.pto").read_text()
    assert pto.count("pto.tmatmul") == 2, pto


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_2d_weight_is_shared_by_every_batch(kernels, platform):
    torch.manual_seed(12)
    a, w = torch.randn(3, 16, 32), torch.randn(32, 48)
    c = torch.full((3, 16, 48), float("nan"))
    compiled = kernels.shared_weight.compile(a, w, c, config=_config(platform))
    kernels.shared_weight(a, w, c, config=_config(platform))
    torch.testing.assert_close(c, torch.matmul(a, w), rtol=1e-4, atol=1e-4)
    text = _after_flatten(compiled)
    assert text.count("pl.tile.load(w, [0, 0], [32, 48])") == 1, text
    assert "__tmp_v0_b2: pl.Tile[[16, 48], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b2, tw)" in text, text
    assert _ptos(compiled) == ["aic/shared_weight_incore_0.pto"]


# Each batch's b is loaded [N, K] and read transposed by its matmul. backend-ptoas lowers it as the
# [K, N] Right tile tmatmul reads, moved from the ZN view of b's Mat tile (the same bytes, typed
# [K, N]), so the kernel gets its .pto with no warning.
@pytest.mark.parametrize("platform", PLATFORMS)
def test_b_trans_over_a_batch(kernels, platform):
    torch.manual_seed(13)
    a, b = torch.randn(2, 16, 64), torch.randn(2, 32, 64)
    c = torch.full((2, 16, 32), float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernels.bmm_b_trans.compile(a, b, c, config=_config(platform))
    kernels.bmm_b_trans(a, b, c, config=_config(platform))
    torch.testing.assert_close(c, torch.bmm(a, b.transpose(-2, -1)), rtol=1e-4, atol=1e-4)
    assert "pl.tile.matmul(ta_b1, tb_b1, b_trans=True)" in _after_flatten(compiled)
    (pto_name,) = _ptos(compiled)
    pto = (Path(compiled.output_dir) / "kernels" / pto_name).read_text()
    zn = ("!pto.tile_buf<loc=mat, dtype=f32, rows=64, cols=32, v_row=?, v_col=?, blayout=row_major, "
          "slayout=col_major, fractal=512, pad=0>")
    assert pto.count(zn) >= 2, pto  # the view's alloc_tile and the tmov reading it
    assert "pto.tmov ins(%tb_b1_t : " + zn in pto, pto


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_matmul_acc_chain_over_a_batch_in_a_loop(kernels, platform):
    torch.manual_seed(14)
    a, b = torch.randn(4, 16, 64, dtype=torch.float16), torch.randn(4, 64, 32, dtype=torch.float16)
    c = torch.full((4, 16, 32), float("nan"))
    compiled = kernels.bmm_split_k.compile(a, b, c, config=_config(platform))
    kernels.bmm_split_k(a, b, c, config=_config(platform))
    torch.testing.assert_close(c, torch.bmm(a.float(), b.float()), rtol=1e-3, atol=1e-3)
    text = _after_flatten(compiled)
    assert "pl.tile.matmul_acc(acc_b1, " in text, text
    assert _ptos(compiled) == ["aic/bmm_split_k_incore_0.pto"]


# A K loop accumulating into a batched product carries one accumulator per batch.
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_k_loop_carries_one_accumulator_per_batch(kernels, platform):
    torch.manual_seed(17)
    a, b = torch.randn(2, 16, 128, dtype=torch.float16), torch.randn(2, 128, 32, dtype=torch.float16)
    c = torch.full((2, 16, 32), float("nan"))
    compiled = kernels.bmm_k_loop.compile(a, b, c, config=_config(platform))
    kernels.bmm_k_loop(a, b, c, config=_config(platform))
    torch.testing.assert_close(c, torch.bmm(a.float(), b.float()), rtol=1e-3, atol=1e-3)
    assert "in pl.range(32, 128, 32, init_values=(acc_b0, acc_b1)):" in _after_flatten(compiled)
    assert _ptos(compiled) == ["aic/bmm_k_loop_incore_0.pto"]


def test_a_batch_of_two_leading_dimensions(kernels):
    torch.manual_seed(15)
    a, b = torch.randn(2, 3, 16, 32), torch.randn(2, 3, 32, 16)
    c = torch.full((2, 3, 16, 16), float("nan"))
    compiled = kernels.bmm_4d.compile(a, b, c, config=_config("a2a3sim"))
    kernels.bmm_4d(a, b, c, config=_config("a2a3sim"))
    torch.testing.assert_close(c, torch.matmul(a, b), rtol=1e-4, atol=1e-4)
    assert "pl.tile.load(a, [1, 2, 0, 0], [1, 1, 16, 32])" in _after_flatten(compiled)
    assert _ptos(compiled) == ["aic/bmm_4d_incore_0.pto"]


# The right operand is computed by the vector core in the same kernel: each batch's matmul reads its
# rows of the merged [160, 48] sum through a tile.slice, pushed to the cube core batch by batch. The
# tiles are 2-D: both members get their .pto (one module of the two, as PTOAS's pipes need), which
# pto-check finds nothing in; on a5 each pushed tile is first moved into the NZ layout of the cube's
# slot (a Vec tile with the Mat tiles' layout), and that is pushed.
@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_operand_computed_by_the_vector_core_is_sliced_per_batch(kernels, platform):
    torch.manual_seed(16)
    a, b0, b1 = torch.randn(2, 16, 80), torch.randn(2, 80, 48), torch.randn(2, 80, 48)
    c = torch.full((2, 16, 48), float("nan"))
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        compiled = kernels.bmm_of_sum.compile(a, b0, b1, c, config=_config(platform))
    messages = [str(w.message) for w in warned]
    assert not messages, messages
    assert len(_ptos(compiled)) == 2, _ptos(compiled)
    report = pto_check.check_paths([Path(compiled.output_dir)])
    assert not report.problems, "\n".join(map(str, report.problems))
    (aiv,) = [p for p in (Path(compiled.output_dir) / "kernels").rglob("*.pto") if "aiv" in p.parts]
    pushes = [line.split(" loc(")[0].strip() for line in aiv.read_text().splitlines() if "pto.tpush_to_aic" in line]
    nz = ("!pto.tile_buf<loc=vec, dtype=f32, rows=80, cols=48, v_row=?, v_col=?, blayout=col_major, "
          "slayout=row_major, fractal=512, pad=0>")
    staged = [f"pto.tpush_to_aic(%bt_b{i}_nz : {nz}) {{split = 0}}" for i in range(2)]
    assert pushes == (staged if platform == "a5sim" else [p for p in pushes if "_nz" not in p]), pushes
    kernels.bmm_of_sum(a, b0, b1, c, config=_config(platform))
    torch.testing.assert_close(c, torch.bmm(a, b0 + b1), rtol=1e-4, atol=1e-4)
    text = _after_flatten(compiled)
    assert "bt_b1: pl.Tile[[80, 48], pl.FP32, pl.Mem.Vec] = pl.tile.slice(bt, [80, 48], [80, 0])" in text, text
