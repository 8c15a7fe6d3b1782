"""Cube results read by vector ops, in the three forms of upstream's advanced/03_mixed_kernel.py.

`staged`: the matmul and the bias add in two scopes (the Acc tile crosses between kernels through a
tensor the orchestration allocates). `mixed` / `left_right`: both in one scope with pl.split(...),
which the simulator runs as an AIC kernel and an AIV kernel handing the result over through global
memory.
"""

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N = 32, 64, 16


@pl.jit
def staged(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cube_only"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vector_only"):
        out[:] = pl.add(acc, bias)
    return out


@pl.jit
def mixed_up_down(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)], name_hint="mixed"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        out[:] = pl.add(acc, bias)
    return out


@pl.jit
def mixed_left_right(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(
        level=pl.Level.CORE_GROUP,
        optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT), pl.cross_core_slot(slot_num=2)],
        name_hint="mixed_lr",
    ):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        out[:] = pl.add(acc, bias)
    return out


# A K-reduction loop (matmul, then matmul_acc) and a residual add in one scope, per N tile of a
# parallel loop, with the accumulator's tensor created in the scope (pypto-lib's gemm_eltwise, small).
@pl.jit
def k_loop_then_residual(a: pl.Tensor[[16, 128], pl.BF16], w: pl.Tensor[[128, 64], pl.BF16],
                         h: pl.Tensor[[16, 64], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    for n0 in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_residual"):
            acc = pl.create_tensor([16, 32], dtype=pl.FP32)
            for kb in pl.range(4):
                k0 = kb * 32
                if kb == 0:
                    acc = pl.matmul(a[:, k0 : k0 + 32], w[k0 : k0 + 32, n0 : n0 + 32], out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, a[:, k0 : k0 + 32], w[k0 : k0 + 32, n0 : n0 + 32])
            out[:, n0 : n0 + 32] = pl.add(acc, pl.cast(h[:, n0 : n0 + 32], target_type=pl.FP32))
    return out


def test_a_k_reduction_loop_then_vector_work_splits_into_two_kernels():
    torch.manual_seed(0)
    a, w, h = torch.randn(16, 128).bfloat16(), torch.randn(128, 64).bfloat16(), torch.randn(16, 64).bfloat16()
    out = torch.full((16, 64), float("nan"))
    kinds = [f.function_type for f in k_loop_then_residual.lower(a, w, h, out).functions.values()]
    assert kinds == ["AIC", "AIV", "Orchestration"], kinds
    k_loop_then_residual(a, w, h, out)
    torch.testing.assert_close(out, a.float() @ w.float() + h.float(), rtol=1e-3, atol=1e-3)


def _inputs():
    torch.manual_seed(0)
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    bias = torch.randn(M, N)
    return a, b, bias, torch.full((M, N), float("nan"))


@pytest.mark.parametrize("kernel", [staged, mixed_up_down, mixed_left_right], ids=lambda k: k.__name__)
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_matmul_bias_matches_torch(kernel, platform):
    a, b, bias, out = _inputs()
    kernel(a, b, bias, out, config=RunConfig(platform=platform))
    torch.testing.assert_close(out, a.float() @ b.float() + bias, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("kernel", [staged, mixed_up_down], ids=lambda k: k.__name__)
def test_cube_and_vector_work_become_an_aic_and_an_aiv_kernel(kernel):
    program = kernel.lower(*_inputs())
    kinds = [f.function_type for f in program.functions.values()]
    assert kinds == ["AIC", "AIV", "Orchestration"], kinds


def test_out_dtype_must_be_the_accumulator_dtype(write_kernel):
    module, _ = write_kernel(
        "bad_out_dtype",
        """
import pypto.language as pl

@pl.jit
def bad(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a, b, out_dtype=pl.FP16)
        out[:] = acc
    return out
""",
    )
    a, b = torch.randn(16, 16, dtype=torch.float16), torch.randn(16, 16, dtype=torch.float16)
    with pytest.raises(Exception, match="out_dtype=FP16"):
        module.bad(a, b, torch.empty(16, 16))


# Attention in one scope: per key block, the cube's scores feed vector ops whose result feeds the
# cube again, and a vector accumulator carries across the loop. The kernel becomes a Group whose
# AIC and AIV members hand the tiles over through cross-core pipes, both ways, every iteration.
@pl.jit
def attention_in_one_scope(q: pl.Tensor[[16, 32], pl.FP16], k: pl.Tensor[[64, 32], pl.FP16],
                           v: pl.Tensor[[64, 32], pl.FP16], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="attention"):
        acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
        for b in pl.range(4):
            scores = pl.matmul(q, k[b * 16 : b * 16 + 16, :], b_trans=True, out_dtype=pl.FP32)
            weights = pl.cast(pl.exp(pl.mul(scores, 0.125)), target_type=pl.FP16)
            acc = pl.add(acc, pl.matmul(weights, v[b * 16 : b * 16 + 16, :], out_dtype=pl.FP32))
        out[:, :] = acc
    return out


def _attention_inputs():
    torch.manual_seed(0)
    q, k, v = (torch.randn(rows, 32, dtype=torch.float16) * 0.5 for rows in (16, 64, 64))
    return q, k, v, torch.full((16, 32), float("nan"))


def _attention_reference(q, k, v):
    out = torch.zeros(16, 32)
    for b in range(4):
        kb, vb = k[b * 16 : b * 16 + 16].float(), v[b * 16 : b * 16 + 16].float()
        weights = torch.exp((q.float() @ kb.T) * 0.125).half().float()
        out += weights @ vb
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_loop_passing_tiles_both_ways_runs_as_one_mixed_task(platform):
    q, k, v, out = _attention_inputs()
    attention_in_one_scope(q, k, v, out, config=RunConfig(platform=platform))
    torch.testing.assert_close(out, _attention_reference(q, k, v), rtol=2e-3, atol=2e-3)


def test_a_mixed_kernel_becomes_a_group_of_its_cube_and_vector_members():
    program = attention_in_one_scope.lower(*_attention_inputs())
    kinds = {f.name: f.function_type for f in program.functions.values()}
    groups = [name for name, kind in kinds.items() if kind == "Group"]
    assert len(groups) == 1, kinds
    assert kinds[groups[0] + "_aic"] == "AIC" and kinds[groups[0] + "_aiv"] == "AIV", kinds
    text = str(program)
    # One pipe each way: scores to the vector core, weights to the cube core, the product back.
    assert text.count("pl.tile.tpush_to_aiv(") == 2 and text.count("pl.tile.tpop_from_aic(") == 2, text
    assert text.count("pl.tile.tpush_to_aic(") == 1 and text.count("pl.tile.tpop_from_aiv(") == 1, text


def test_a_scalar_the_cube_needs_from_a_vector_tile_is_refused(write_kernel):
    module, path = write_kernel(
        "scalar_across",
        """
import pypto.language as pl

@pl.jit
def k(a: pl.Tensor[[32, 16], pl.FP16], n: pl.Tensor[[16, 16], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        counts = pl.add(n[:, :], 1)
        first = pl.read(counts, [0, 0])
        out[:, :] = pl.matmul(a[first : first + 16, :], a[0:16, :], out_dtype=pl.FP32)
    return out
""",
    )
    a = torch.randn(32, 16, dtype=torch.float16)
    with pytest.raises(Exception) as error:
        module.k(a, torch.zeros(16, 16, dtype=torch.int32), torch.empty(16, 16))
    message = str(error.value)
    assert "kernel 'k_incore_0' mixes cube and vector work, and its cube part reads 'first', which only the vector " \
        "part computes; only tiles can cross between the two" in message, message
    assert f"{path}:9:" in message, message


# prefill_indexer's masking: per token, a product row narrowed to its visible length and padded
# with -inf by the vector core (pl.fillpad of an Acc tile reads its move into Vec).
@pl.jit
def masked_scores(q: pl.Tensor[[4, 64], pl.FP16], k: pl.Tensor[[32, 64], pl.FP16], lens: pl.Tensor[[4], pl.INT32],
                  out: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="masked"):
        for t in pl.range(4):
            row = pl.matmul(q[t : t + 1, :], k[:, :], b_trans=True, out_dtype=pl.FP32)
            visible = pl.cast(pl.read(lens, [t]), pl.INDEX)
            out[t : t + 1, :] = pl.fillpad(pl.set_validshape(row, 1, visible), pad_value=pl.PadValue.min)
    return out


def test_a_product_narrowed_and_padded_by_the_vector_core():
    torch.manual_seed(2)
    q, k = torch.randn(4, 64, dtype=torch.float16), torch.randn(32, 64, dtype=torch.float16)
    lens = torch.tensor([32, 5, 0, 17], dtype=torch.int32)
    out = torch.zeros(4, 32)
    masked_scores(q, k, lens, out)
    expected = q.float() @ k.float().T
    expected[torch.arange(32)[None, :] >= lens[:, None].long()] = float("-inf")
    torch.testing.assert_close(out, expected, rtol=1e-3, atol=1e-3)
