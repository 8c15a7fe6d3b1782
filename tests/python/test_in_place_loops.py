"""Orchestration loops whose kernel scopes update a tensor in place (`t = pl.assemble(t, ...)`, in a
pl.at scope, a pl.spmd scope or a kernel loop inside one, and `t[a:b, :] = u`): each iteration's
kernel writes into the one tensor and later code reads it, checked on the simulator against torch.
Also an `if` on module constants, which keeps only the branch it takes."""

import pytest
import torch

PROGRAMS = '''
import pypto.language as pl

T_TILE = 16
HC = 2
D = 32
PAD = 32
COLS = 32


@pl.jit
def row_norms(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    # Pass 1 fills inv [HC, 64] one [1, T_TILE] piece per (t0, hc); pass 2 reads it back.
    inv = pl.create_tensor([HC, 64], dtype=pl.FP32)
    for t0 in pl.parallel(0, 64, T_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="sums"):
            for hc in pl.range(HC):
                chunk = x[t0 : t0 + T_TILE, hc * D : (hc + 1) * D]
                sq = pl.reshape(pl.row_sum(pl.mul(chunk, chunk)), [1, T_TILE])
                inv = pl.assemble(inv, pl.rsqrt(pl.add(sq, 1.0)), [hc, t0])
    for t0 in pl.parallel(0, 64, T_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            for hc in pl.range(HC):
                scale = pl.reshape(inv[hc : hc + 1, t0 : t0 + T_TILE], [T_TILE, 1])
                chunk = x[t0 : t0 + T_TILE, hc * D : (hc + 1) * D]
                out[t0 : t0 + T_TILE, hc * D : (hc + 1) * D] = pl.row_expand_mul(chunk, scale)
    return out


@pl.jit
def rotate_rows(q: pl.InOut[pl.Tensor[[4, 64], pl.FP32]], out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
    # q is updated in place row by row, then read whole by a later kernel.
    for b in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rotate"):
            for col in pl.range(0, 64, 32):
                lo = q[b : b + 1, col : col + 16]
                hi = q[b : b + 1, col + 16 : col + 32]
                q = pl.assemble(q, pl.neg(hi), [b, col])
                q = pl.assemble(q, lo, [b, col + 16])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
        out[:, :] = pl.mul(q[:, :], 2.0)
    return out


@pl.jit
def staged(x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    # A tensor created in each outer iteration, filled by a parallel loop of kernels, then read.
    for r in pl.range(0, 32, 16):
        stage = pl.create_tensor([16, 64], dtype=pl.FP32)
        for c0 in pl.parallel(0, 64, 32):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
                for c in pl.range(c0, c0 + 32, 16):
                    stage = pl.assemble(stage, pl.exp(x[r : r + 16, c : c + 16]), [0, c])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="drain"):
            out[r : r + 16, :] = pl.add(stage[:, :], 1.0)
    return out


@pl.jit
def scattered(x: pl.Tensor[[8, 32], pl.FP32], cache: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]):
    # Each block of a pl.spmd scope writes the rows it owns, under a kernel branch.
    for base in pl.range(0, 32, 16):
        with pl.spmd(4, name_hint="scatter"):
            blk = pl.tile.get_block_idx()
            for it in pl.range(2):
                g = blk + it * 4
                if g < 6:
                    cache = pl.assemble(cache, pl.exp(x[g : g + 1, :]), [base + g * 2, 0])
    return cache


@pl.jit
def chained(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    # Each launch waits for the previous one (a carried TaskId) and writes its rows of y in place.
    prev = pl.system.task_invalid()
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as tid:
            y = pl.assemble(y, pl.mul(x[i * 16 : (i + 1) * 16, :], 3.0), [i * 16, 0])
        prev = tid
    return y


@pl.jit
def sliced(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[i * 16 : (i + 1) * 16, :] = pl.sub(x[i * 16 : (i + 1) * 16, :], 1.0)
    return y


@pl.jit
def padded(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, 0:COLS] = pl.exp(x[:, 0:COLS])
        if PAD > COLS:
            y[:, COLS:PAD] = pl.full([16, PAD - COLS], dtype=pl.FP32, value=0.0)
    return y
'''


@pytest.fixture
def programs(write_kernel):
    module, _ = write_kernel("in_place_loops", PROGRAMS)
    return module


def test_a_tensor_filled_piece_by_piece_in_a_parallel_loop_is_read_by_the_next(programs):
    torch.manual_seed(0)
    x = torch.randn(64, 64)
    out = torch.zeros(64, 64)
    programs.row_norms(x, out)
    inv = torch.rsqrt((x.reshape(64, 2, 32) ** 2).sum(-1) + 1.0)
    torch.testing.assert_close(out, (x.reshape(64, 2, 32) * inv[..., None]).reshape(64, 64), rtol=1e-5, atol=1e-5)


def test_an_inout_tensor_updated_row_by_row_in_a_parallel_loop(programs):
    torch.manual_seed(1)
    q = torch.randn(4, 64)
    out = torch.zeros(4, 64)
    expected = q.clone().reshape(4, 2, 2, 16)
    expected = torch.cat([-expected[:, :, 1:], expected[:, :, :1]], dim=2).reshape(4, 64)
    programs.rotate_rows(q, out)
    torch.testing.assert_close(q, expected)
    torch.testing.assert_close(out, expected * 2.0)


def test_a_tensor_created_per_iteration_is_filled_by_a_kernel_loop_then_read(programs):
    torch.manual_seed(2)
    x = torch.randn(32, 64)
    out = torch.zeros(32, 64)
    programs.staged(x, out)
    torch.testing.assert_close(out, torch.exp(x) + 1.0, rtol=1e-5, atol=1e-5)


def test_an_spmd_scope_in_a_loop_writes_rows_under_a_branch(programs):
    torch.manual_seed(3)
    x = torch.randn(8, 32)
    cache = torch.full((32, 32), 7.0)
    expected = cache.clone()
    for base in (0, 16):
        for g in range(6):
            expected[base + g * 2] = torch.exp(x[g])
    programs.scattered(x, cache)
    torch.testing.assert_close(cache, expected, rtol=1e-5, atol=1e-5)


def test_a_loop_chaining_its_launches_updates_a_tensor_in_place(programs):
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    programs.chained(x, y)
    torch.testing.assert_close(y, x * 3.0)


def test_slice_assignments_in_a_loop_of_scopes(programs):
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    programs.sliced(x, y)
    torch.testing.assert_close(y, x - 1.0)


def test_an_if_on_module_constants_drops_the_branch_not_taken(programs):
    x = torch.randn(16, 32)
    y = torch.full((16, 32), 5.0)
    programs.padded(x, y)
    torch.testing.assert_close(y, torch.exp(x), rtol=1e-5, atol=1e-5)


BAD = '''
import pypto.language as pl


@pl.jit
def reshaped(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    t = pl.create_tensor([16, 32], dtype=pl.FP32)
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.assemble(y, pl.exp(t[i * 8 : (i + 1) * 8, :]), [i * 8, 0])
        t = pl.reshape(t, [32, 16])
    return y
'''


def test_a_tensor_whose_type_changes_across_iterations_is_refused(write_kernel):
    module, path = write_kernel("bad_carry", BAD)
    with pytest.raises(Exception) as info:
        module.reshaped.lower(torch.randn(16, 32), torch.zeros(16, 32))
    message = str(info.value)
    assert message.startswith(
        "error: 't' is carried from one loop iteration to the next, but its type changes from "
        "pl.Tensor[[16, 32], pl.FP32] to pl.Tensor[[32, 16], pl.FP32]\n"
    ), message
    assert f"--> {path}:11:9" in message, message
    assert "help: a loop-carried value keeps its shape, dtype and memory space in every iteration" in message
