"""The matmul family beyond plain products, on the simulator against torch: matmul_bias (a bias row
added to every row), the single-row gemv / gemv_acc / gemv_bias, matmul_acc(init_cond=...) in a K
loop with no peeled first step, narrowed valid rows and contractions, batches of matrices
(pl.batch_matmul, pl.matmul of 3-D tensors, broadcast batches, transpose_view of a batch), and
loads clamped at a tensor's edge."""

import re
import warnings
from pathlib import Path

import pytest
import torch
from conftest import is_poison, kernels_fixture, unwritten
from pto_dialect import pto_check

import pypto.language as pl
from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl


@pl.jit
def biased(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        tbias = pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
        pl.store(pl.tile.matmul_bias(ta, tb, tbias), [0, 0], out)
    return out


# 8 of the 16 rows and 24 of the 64 K elements are valid: only those rows are stored and only that
# much of K is summed.
@pl.jit
def narrowed(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 64], valid_shape=[8, 24], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 32], valid_shape=[24, 32], target_memory=pl.Mem.Mat)
        tbias = pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
        pl.store(pl.tile.matmul_bias(ta, tb, tbias), [0, 0], out)
    return out


@pl.jit
def gemv(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [1, 256], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        pl.store(pl.tile.gemv(ta, tb), [0, 0], out)
    return out


# The rhs tile is wider than the tensor: clamp=True cuts its valid region back to the tensor's 30
# columns, and the product has 30 valid columns.
@pl.jit
def gemv_bias_clamped(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [1, 512], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [512, 32], target_memory=pl.Mem.Mat, clamp=True)
        tbias = pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat, clamp=True)
        pl.store(pl.tile.gemv_bias(ta, tb, tbias), [0, 0], out)
    return out


@pl.jit
def gemv_two_chunks(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a0 = pl.load(a, [0, 0], [1, 128], target_memory=pl.Mem.Mat)
        b0 = pl.load(b, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
        acc = pl.tile.gemv(a0, b0, acc_phase="partial")
        a1 = pl.load(a, [0, 128], [1, 128], target_memory=pl.Mem.Mat)
        b1 = pl.load(b, [128, 0], [128, 64], target_memory=pl.Mem.Mat)
        acc = pl.tile.gemv_acc(acc, a1, b1, acc_phase="final")
        pl.store(acc, [0, 0], out)
    return out


# The accumulator is never zeroed: init_cond=(k0 == 0) overwrites it on the first step.
@pl.jit
def split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.Mem.Acc)
        for k0 in pl.range(0, 128, 32):
            a_l1 = pl.load(a, [0, k0], [32, 32], target_memory=pl.Mem.Mat)
            b_l1 = pl.load(b, [k0, 0], [32, 64], target_memory=pl.Mem.Mat)
            a_l0 = pl.move(a_l1, target_memory=pl.Mem.Left)
            b_l0 = pl.move(b_l1, target_memory=pl.Mem.Right)
            acc = pl.matmul_acc(acc, a_l0, b_l0, init_cond=(k0 == 0))
        pl.store(acc, [0, 0], c)
    return c


# The transposed operand is a vector-core sum the cube core pops from its pipe (a mixed kernel).
@pl.jit
def summed_rhs_transposed(a: pl.Tensor[[16, 80], pl.FP32], b0: pl.Tensor[[48, 80], pl.FP32],
                          b1: pl.Tensor[[48, 80], pl.FP32], c: pl.Out[pl.Tensor[[16, 48], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        bt = pl.add(b0, b1)
        c = pl.assemble(c, pl.matmul(a, bt, b_trans=True, out_dtype=pl.FP32), [0, 0])
    return c


# K steps too large for L0A/L0B, which the compiler splits further: only the first of the pieces of
# the k0 == 0 step overwrites. The accumulator is reused for the second column block, so a split
# that lost init_cond would add the first block's sums into the second's.
@pl.jit
def split_k_large(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.tile.create([64, 128], pl.FP32, target_memory=pl.Mem.Acc)
        for n0 in pl.range(0, 256, 128):
            for k0 in pl.range(0, 1024, 512):
                ta = pl.load(a, [0, k0], [64, 512], target_memory=pl.Mem.Mat)
                tb = pl.load(b, [k0, n0], [512, 128], target_memory=pl.Mem.Mat)
                acc = pl.matmul_acc(acc, ta, tb, init_cond=(k0 == 0))
            pl.store(acc, [0, n0], c)
    return c


@pl.jit
def batched(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [3, 32, 16], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0, 0], [3, 16, 48], target_memory=pl.Mem.Mat)
        pl.store(pl.batch_matmul(ta, tb), [0, 0, 0], c)
    return c


# One weight matrix for every batch of the left operand, and a batch of transposed right operands.
@pl.jit
def broadcast_batch(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.assemble(c, pl.matmul(a, w, out_dtype=pl.FP32), [0, 0, 0])
    return c


@pl.jit
def batch_b_transposed(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tb = pl.load(b, [0, 0, 0], [2, 48, 16], target_memory=pl.Mem.Mat)
        ta = pl.load(a, [0, 0, 0], [2, 32, 16], target_memory=pl.Mem.Mat)
        pl.store(pl.batch_matmul(ta, pl.tile.transpose_view(tb)), [0, 0, 0], c)
    return c


@pl.jit
def tensor_batch_b_trans(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.assemble(c, pl.matmul(a, b, b_trans=True, out_dtype=pl.FP32), [0, 0, 0])
    return c
'''


kernels = kernels_fixture("matmul_family_kernels.py", KERNELS)


def test_matmul_bias_adds_the_bias_row_to_every_row(kernels):
    a, b, bias = torch.randn(16, 64), torch.randn(64, 32), torch.randn(1, 32)
    out = torch.zeros(16, 32)
    kernels.biased(a, b, bias, out)
    torch.testing.assert_close(out, a @ b + bias, rtol=1e-4, atol=1e-4)


def test_matmul_bias_is_printed_with_its_bias_operand_in_bias_memory(kernels):
    a, b, bias, out = torch.randn(16, 64), torch.randn(64, 32), torch.randn(1, 32), torch.zeros(16, 32)
    text = str(kernels.biased.lower(a, b, bias, out))
    # The compiler moved the bias row from Mat into Bias, as it moves the operands into Left and Right.
    assert ("tbias_bias: pl.Tile[[1, 32], pl.FP32, pl.MemRef(0, 128), pl.Mem.Bias] = "
            "pl.tile.move(tbias, target_memory=pl.Mem.Bias)") in text
    assert ("__tmp_v0: pl.Tile[[16, 32], pl.FP32, pl.MemRef(0, 2048), pl.Mem.Acc] = "
            "pl.tile.matmul_bias(ta_left, tb_right, tbias_bias)") in text


def test_a_narrowed_lhs_sums_its_valid_contraction_and_stores_its_valid_rows(kernels):
    a, b, bias = torch.randn(16, 64), torch.randn(64, 32), torch.randn(1, 32)
    a[:, 24:] = float("nan")  # outside the valid K: never read
    out = torch.full((16, 32), -5.0)
    with unwritten("output 'out' [16, 32] float32: 256 of 512 elements were never written: all of rows 8..15"):
        kernels.narrowed(a, b, bias, out)
    torch.testing.assert_close(out[:8], a[:8, :24] @ b[:24] + bias, rtol=1e-4, atol=1e-4)
    assert is_poison(out[8:])  # only the 8 valid rows are stored


def test_the_narrowed_product_carries_the_valid_rows_of_its_lhs(kernels):
    a, b, bias, out = torch.randn(16, 64), torch.randn(64, 32), torch.randn(1, 32), torch.zeros(16, 32)
    text = str(kernels.narrowed.lower(a, b, bias, out))
    assert ("__tmp_v0: pl.Tile[[16, 32], pl.FP32, pl.MemRef(0, 2048), pl.Mem.Acc, pl.TileView(valid_shape=[8, 32])] = "
            "pl.tile.matmul_bias(ta_left, tb_right, tbias_bias)") in text


def test_gemv_of_bf16_inputs_accumulates_in_fp32(kernels):
    a = torch.randn(1, 256).bfloat16()
    b = torch.randn(256, 64).bfloat16()
    out = torch.zeros(1, 64)
    kernels.gemv(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


def test_gemv_bias_of_int8_inputs_is_exact_over_the_clamped_columns(kernels):
    a = torch.randint(-4, 5, (1, 512), dtype=torch.int8)
    b = torch.randint(-4, 5, (512, 30), dtype=torch.int8)
    bias = torch.randint(-100, 100, (1, 30), dtype=torch.int32)
    out = torch.zeros(1, 30, dtype=torch.int32)
    kernels.gemv_bias_clamped(a, b, bias, out)
    assert torch.equal(out, a.int() @ b.int() + bias)


def test_clamp_cuts_the_valid_region_at_the_tensors_edge(kernels):
    a = torch.zeros(1, 512, dtype=torch.int8)
    b = torch.zeros(512, 30, dtype=torch.int8)
    bias = torch.zeros(1, 30, dtype=torch.int32)
    out = torch.zeros(1, 30, dtype=torch.int32)
    text = str(kernels.gemv_bias_clamped.lower(a, b, bias, out))
    assert ("tb: pl.Tile[[512, 32], pl.INT8, pl.MemRef(512, 16384), pl.Mem.Mat, pl.TileView(valid_shape=[512, 30])] = "
            "pl.tile.load(b, [0, 0], [512, 32], target_memory=pl.Mem.Mat, clamp=True)") in text
    assert ("__tmp_v0: pl.Tile[[1, 32], pl.INT32, pl.MemRef(0, 128), pl.Mem.Acc, pl.TileView(valid_shape=[1, 30])] = "
            "pl.tile.gemv_bias(ta_left, tb_right, tbias_bias)") in text


def test_gemv_acc_adds_a_second_k_chunk(kernels):
    a, b = torch.randn(1, 256), torch.randn(256, 64)
    out = torch.zeros(1, 64)
    kernels.gemv_two_chunks(a, b, out)
    torch.testing.assert_close(out, a @ b, rtol=1e-4, atol=1e-4)
    text = str(kernels.gemv_two_chunks.lower(a, b, out))
    assert ('acc: pl.Tile[[1, 64], pl.FP32, pl.MemRef(0, 256), pl.Mem.Acc] = '
            'pl.tile.gemv(a0_left, b0_right, acc_phase="partial")') in text
    assert ('acc_1: pl.Tile[[1, 64], pl.FP32, pl.MemRef(0, 256), pl.Mem.Acc] = '
            'pl.tile.gemv_acc(acc, a1_left, b1_right, acc_phase="final")') in text


def test_init_cond_overwrites_the_accumulator_on_the_first_k_step(kernels):
    a, b = torch.randn(32, 128), torch.randn(128, 64)
    c = torch.zeros(32, 64)
    kernels.split_k(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_init_cond_is_a_branch_over_tmatmul_and_tmatmul_acc_in_the_pto(kernels):
    """The pto ops have no flag for it: the module tests k0 == 0 and overwrites or accumulates."""
    a, b, c = torch.randn(32, 128), torch.randn(128, 64), torch.zeros(32, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto is a warning
        compiled = kernels.split_k.compile(a, b, c, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aic/*.pto")
    lines = [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.read_text().splitlines()]
    lines = [re.sub(r"!pto\.tile_buf<loc=(\w+), [^>]*>", r"\1", line) for line in lines]
    at = lines.index("%1 = arith.cmpi eq, %k0, %c0_index : index")
    assert lines[at + 1:at + 6] == [
        "scf.if %1 {",
        "pto.tmatmul ins(%a_l0, %b_l0 : left, right) outs(%0 : acc)",
        "} else {",
        "pto.tmatmul.acc ins(%0, %a_l0, %b_l0 : acc, left, right) outs(%0 : acc)",
        "}"]
    assert not pto_check.check_paths([Path(compiled.output_dir)]).problems


def test_a_transposed_rhs_popped_from_the_vector_core_is_read_through_a_treshape_of_its_slot(kernels):
    """The cube core reads a popped tile in its pipe slot; its transposed view is a pto.treshape of the
    pop (test_pto_btrans_popped.py checks the text): every kernel gets a .pto, and the numbers hold."""
    a, b0, b1 = torch.randn(16, 80), torch.randn(48, 80), torch.randn(48, 80)
    c = torch.zeros(16, 48)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernels.summed_rhs_transposed(a, b0, b1, c)
    torch.testing.assert_close(c, a @ (b0 + b1).T, rtol=1e-4, atol=1e-4)
    assert not [str(w.message) for w in caught if "no .pto written" in str(w.message)]


def test_init_cond_is_printed_as_the_keyword_it_was_given_as(kernels):
    a, b, c = torch.randn(32, 128), torch.randn(128, 64), torch.zeros(32, 64)
    text = str(kernels.split_k.lower(a, b, c))
    assert ("acc_2: pl.Tile[[32, 64], pl.FP32, pl.MemRef(0, 8192), pl.Mem.Acc] = "
            "pl.tile.matmul_acc(acc_1, a_l0, b_l0, init_cond=k0 == 0)") in text


def test_init_cond_survives_the_split_of_a_k_step_too_large_for_l0(kernels):
    a, b = torch.randn(64, 1024), torch.randn(1024, 256)
    c = torch.zeros(64, 256)
    kernels.split_k_large(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)
    text = str(kernels.split_k_large.lower(a, b, c))
    assert "init_cond=k0 == 0" in text and "pl.tile.extract(ta, 0, 0" in text


def test_batch_matmul_multiplies_each_pair_of_matrices(kernels):
    a, b = torch.randn(3, 32, 16), torch.randn(3, 16, 48)
    c = torch.zeros(3, 32, 48)
    kernels.batched(a, b, c)
    torch.testing.assert_close(c, torch.bmm(a, b), rtol=1e-4, atol=1e-4)
    text = str(kernels.batched.lower(a, b, c))
    # One 2-D matmul per batch (FlattenTileNdTo2D), each batch's operands loaded on their own.
    assert ("__tmp_v0_b2: pl.Tile[[32, 48], pl.FP32, pl.MemRef(0, 6144), pl.Mem.Acc] = "
            "pl.tile.matmul(ta_b2_left, tb_b2_right)") in text, text
    assert "pl.tile.load(b, [2, 0, 0], [1, 16, 48], target_memory=pl.Mem.Mat)" in text, text


def test_a_single_matrix_serves_every_batch(kernels):
    a, w = torch.randn(4, 16, 32), torch.randn(32, 24)
    c = torch.zeros(4, 16, 24)
    kernels.broadcast_batch(a, w, c)
    torch.testing.assert_close(c, torch.matmul(a, w), rtol=1e-4, atol=1e-4)


def test_transpose_view_of_a_batch_transposes_each_matrix(kernels):
    a, b = torch.randn(2, 32, 16), torch.randn(2, 48, 16)
    c = torch.zeros(2, 32, 48)
    kernels.batch_b_transposed(a, b, c)
    torch.testing.assert_close(c, torch.bmm(a, b.transpose(-2, -1)), rtol=1e-4, atol=1e-4)


def test_matmul_of_3d_tensors_with_b_trans(kernels):
    a, b = torch.randn(2, 16, 80), torch.randn(2, 48, 80)
    c = torch.zeros(2, 16, 48)
    kernels.tensor_batch_b_trans(a, b, c)
    torch.testing.assert_close(c, torch.matmul(a, b.transpose(-2, -1)), rtol=1e-4, atol=1e-4)


# 4 batches of [64, 128] x [512, 128]^T: 1 MB of right operands is twice L1, so each batch is loaded,
# multiplied (in blocks of L0's size) and stored on its own: FlattenTileNdTo2D unrolls the batch,
# each batch's loads made right before its matmul, so every batch reuses the same L1 addresses.
def test_a_batched_matmul_larger_than_l1_runs_a_batch_at_a_time(kernels):
    a, b = torch.randn(4, 64, 128), torch.randn(4, 512, 128)
    c = torch.zeros(4, 64, 512)
    kernels.tensor_batch_b_trans(a, b, c)
    torch.testing.assert_close(c, torch.matmul(a, b.transpose(-2, -1)), rtol=1e-4, atol=1e-4)
    text = str(kernels.tensor_batch_b_trans.lower(a, b, c))
    assert ("__tmp_v1_b3: pl.Tile[[512, 128], pl.FP32, pl.MemRef(32768, 262144), pl.Mem.Mat] = "
            "pl.tile.load(b, [3, 0, 0], [1, 512, 128], target_memory=pl.Mem.Mat)") in text, text


# The weight is one matrix for every batch: loaded once, before the loop over the batches.
def test_a_large_batch_times_one_weight_loads_the_weight_once(kernels):
    a, w = torch.randn(4, 64, 128), torch.randn(128, 512)
    c = torch.zeros(4, 64, 512)
    kernels.broadcast_batch(a, w, c)
    torch.testing.assert_close(c, torch.matmul(a, w), rtol=1e-4, atol=1e-4)


ERRORS = '''
@pl.jit
def two_rows(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [2, 128], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
        pl.store(pl.tile.gemv(ta, tb), [0, 0], out)
    return out


@pl.jit
def bias_dtype(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        tbias = pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
        pl.store(pl.tile.matmul_bias(ta, tb, tbias), [0, 0], out)
    return out


@pl.jit
def batches_disagree(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.assemble(c, pl.batch_matmul(a, b), [0, 0, 0])
    return c


# pl.tile.slice of an Acc tile is a view of it where a product accumulates into it: each column
# window's K sums land in acc (upstream's pto.subview as the MAD's destination).
@pl.jit
def window_accumulate(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
        for t in pl.range(2):
            for k0 in pl.range(0, 128, 64):
                a_l1 = pl.load(a, [0, k0], [16, 64], target_memory=pl.Mem.Mat)
                b_l1 = pl.load(b, [k0, t * 64], [64, 64], target_memory=pl.Mem.Mat)
                win = pl.tile.slice(acc, [16, 64], [0, t * 64])
                win = pl.matmul_acc(win, a_l1, b_l1, init_cond=(k0 == 0))
        pl.store(acc, [0, 0], c)
    return c


# The window is read besides the product, so it is a copy of acc: the sums would never reach acc.
@pl.jit
def window_read_and_accumulated(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
        a_l1 = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        b_l1 = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        win = pl.tile.slice(acc, [16, 64], [0, 64])
        pl.store(win, [0, 0], d)
        win = pl.matmul_acc(win, a_l1, b_l1)
        pl.store(acc, [0, 0], c)
    return c
'''


def test_gemv_refuses_a_left_operand_of_two_rows(write_dsl):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_dsl("gemv_errors", ERRORS)
    with pytest.raises(ParserTypeError) as error:
        module.two_rows(torch.randn(2, 128), torch.randn(128, 64), torch.zeros(1, 64))
    assert error.value.message == ("pl.tile.gemv: the left operand of tile.gemv must be a single row [1, K], got "
                                   "pl.Tile[[2, 128], pl.FP32, pl.Mem.Mat]")
    assert error.value.location == f"{path}:9:18"


def test_matmul_bias_refuses_a_bias_of_the_input_dtype(write_dsl):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_dsl("bias_errors", ERRORS)
    with pytest.raises(ParserTypeError) as error:
        module.bias_dtype(torch.randn(16, 64).half(), torch.randn(64, 32).half(), torch.randn(1, 32).half(),
                          torch.zeros(16, 32))
    assert error.value.message == ("pl.tile.matmul_bias: the bias of tile.matmul_bias must be a [1, 32] FP32 row "
                                   "(the product's columns and accumulator dtype), got pl.Tile[[1, 32], pl.FP16, "
                                   "pl.Mem.Mat]")
    assert error.value.location == f"{path}:19:18"


def test_batches_that_do_not_broadcast_are_refused(write_dsl):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_dsl("batch_errors", ERRORS)
    with pytest.raises(ParserTypeError) as error:
        module.batches_disagree(torch.randn(2, 16, 32), torch.randn(3, 32, 16), torch.zeros(3, 16, 16))
    assert error.value.message == ("pl.batch_matmul: tile.matmul cannot broadcast the batch dimensions of "
                                   "pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] and pl.Tile[[3, 32, 16], pl.FP32, "
                                   "pl.Mem.Vec]: 2 against 3")
    assert error.value.location == f"{path}:26:28"


def test_products_accumulate_into_column_windows_of_an_acc_tile(write_dsl):
    module, _ = write_dsl("window_accumulate", ERRORS)
    a, b = torch.randn(16, 128), torch.randn(128, 128)
    c = torch.zeros(16, 128)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.window_accumulate(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    # The device's product writes a pto.subset view of acc (backend-ptoas), so a .pto is written.
    assert not [w for w in caught if "no .pto written" in str(w.message)], "\n".join(str(w.message) for w in caught)


def test_an_accumulation_into_a_window_read_otherwise_is_refused(write_dsl):
    from pypto.language.parser.diagnostics import InvalidOperationError

    module, path = write_dsl("window_read", ERRORS)
    with pytest.raises(InvalidOperationError) as error:
        module.window_read_and_accumulated(torch.randn(16, 64), torch.randn(64, 64), torch.zeros(16, 128),
                                           torch.zeros(16, 64))
    assert error.value.message == ("tile.matmul_acc writes into 'win', a copy of a window of 'acc' made by "
                                   "tile.slice, and its result is never read: the write would not reach 'acc'")
    assert error.value.location == f"{path}:55:15"


@pl.jit
def narrowed_k_loop(x: pl.Tensor[[16, 128], pl.FP32], w: pl.Tensor[[64, 128], pl.FP32],
                    y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.spmd(1, name_hint="proj"):
        acc = pl.create_tensor([16, 64], dtype=pl.FP32)
        for kb in pl.pipeline(0, 2, stage=2):
            k0 = kb * 64
            rows = pl.min(16, 12 + kb * 0)
            xt = pl.slice(x, [16, 64], [0, k0], valid_shape=[rows, 64])
            wt = w[0:64, k0 : k0 + 64]
            if k0 == 0:
                acc = pl.matmul(xt, wt, out_dtype=pl.FP32, b_trans=True)
            else:
                acc = pl.matmul_acc(acc, xt, wt, b_trans=True)
        y[0:16, 0:64] = acc
    return y


def test_a_k_loop_over_a_narrowed_operand_carries_the_accumulator():
    # The first step's product keeps x's valid rows, the accumulation the accumulator's: the if's
    # result is the whole tile, and the loop carries it (pypto-lib's decode compressors).
    x, w = torch.randn(16, 128), torch.randn(64, 128)
    y = torch.zeros(16, 64)
    narrowed_k_loop(x, w, y)
    torch.testing.assert_close(y[:12], (x @ w.T)[:12], rtol=1e-4, atol=1e-3)
