"""Windows of tiles: a matmul larger than the cube's L0 buffers computed block by block
(AutoTileMatmulL0, pl.tile.extract), tiles written into windows of other tiles (pl.tile.assemble),
and tile slices at offsets computed in a loop, all checked against torch."""

import pytest
import torch

MATMULS = '''
import pypto.language as pl


@pl.jit
def stored(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stored"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, c, [0, 0])
    return out


@pl.jit
def chained(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chained"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pl.jit
def extracted(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_mat = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        b_mat = pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        a_l = pl.tile.extract(a_mat, 32, 16, [32, 48], target_memory=pl.MemorySpace.Left)
        b_r = pl.tile.extract(b_mat, 16, 0, [48, 32], target_memory=pl.MemorySpace.Right)
        out = pl.store(pl.matmul(a_l, b_r), [0, 0], out)
    return out
'''


@pytest.mark.parametrize("m,k,n", [(256, 128, 256), (256, 32, 256), (128, 512, 128), (64, 1024, 64)])
def test_a_matmul_beyond_l0_is_computed_block_by_block(write_kernel, m, k, n):
    module, _ = write_kernel("matmuls", MATMULS)
    torch.manual_seed(0)
    a, b = torch.randn(m, k), torch.randn(k, n)
    out = torch.zeros(m, n)
    module.stored(a, b, out)
    torch.testing.assert_close(out, a @ b, rtol=1e-4, atol=1e-3)


def test_a_bf16_matmul_beyond_l0_accumulates_in_fp32(write_kernel):
    module, _ = write_kernel("matmuls", MATMULS)
    torch.manual_seed(1)
    a, b = torch.randn(256, 192, dtype=torch.bfloat16), torch.randn(192, 256, dtype=torch.bfloat16)
    out = torch.zeros(256, 256)
    module.stored(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("m,k,n", [(128, 64, 128), (128, 512, 128), (256, 32, 256), (256, 192, 256)])
def test_a_product_cast_and_chained_into_another_matmul_stays_on_chip(write_kernel, m, k, n):
    # The [m, n] product is narrowed to BF16 on its way out of L0C (round half to even) and read by the
    # second matmul from L1; beyond L0C it is computed block by block into an L1 scratch.
    module, _ = write_kernel("matmuls", MATMULS)
    torch.manual_seed(2)
    a, b = torch.randn(m, k, dtype=torch.bfloat16), torch.randn(k, n, dtype=torch.bfloat16)
    e = torch.randn(n, 64, dtype=torch.bfloat16)
    out = torch.zeros(m, 64)
    module.chained(a, b, e, out)
    golden = (a.float() @ b.float()).to(torch.bfloat16).float() @ e.float()
    # A product summed in another order may round to the neighbouring BF16 value, so single elements
    # of the result can differ by a BF16 step of the product times e: compare the whole (as upstream's
    # example does), against what skipping the narrowing would give.
    relative = ((out - golden).norm() / golden.norm()).item()
    assert relative < 1e-3, relative
    unnarrowed = (a.float() @ b.float()) @ e.float()
    assert ((out - unnarrowed).norm() / golden.norm()).item() > relative


def test_the_tiled_kernel_loops_over_blocks(write_kernel):
    module, _ = write_kernel("matmuls", MATMULS)
    a, b, out = torch.randn(256, 128), torch.randn(128, 256), torch.zeros(256, 256)
    text = str(module.stored.lower(a, b, out))
    assert "for c_mi in pl.range(0, 256, 128):" in text
    assert "pl.tile.extract(__tmp_v0, c_mi, c_ki, [128, 64], target_memory=pl.Mem.Left)" in text


BEYOND_L0C = '''
import pypto.language as pl


@pl.jit
def biased(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_mat = pl.load(a, [0, 0], [128, 256], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [256, 512], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, 512], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul_bias(a_mat, b_mat, bias_mat)
        out = pl.store(c, [0, 0], out)
    return out


# A K loop written in the kernel whose [272, 144] INT32 accumulator (153 KB) exceeds L0C.
@pl.jit
def k_loop(a: pl.Tensor[[272, 512], pl.INT8], b: pl.Tensor[[512, 144], pl.INT8],
           c: pl.Out[pl.Tensor[[272, 144], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([272, 144], dtype=pl.INT32)
        for kb in pl.range(2):
            k0 = kb * 256
            at = a[0:272, k0 : k0 + 256]
            bt = b[k0 : k0 + 256, 0:144]
            if k0 == 0:
                acc = pl.matmul(at, bt, out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, at, bt)
        c[0:272, 0:144] = acc
    return c
'''


def test_a_matmul_bias_beyond_l0c_adds_the_bias_once_per_block(write_kernel):
    # The 256 KB FP32 result exceeds L0C and the 2 KB bias row the 1 KB Bias buffer of Ascend910B:
    # each [128, 128] block adds its window of the row on its first K step only.
    module, _ = write_kernel("beyond_l0c", BEYOND_L0C)
    torch.manual_seed(3)
    a, b = torch.randn(128, 256, dtype=torch.bfloat16), torch.randn(256, 512, dtype=torch.bfloat16)
    bias = torch.randn(1, 512)
    out = torch.zeros(128, 512)
    module.biased(a, b, bias, out)
    torch.testing.assert_close(out, a.float() @ b.float() + bias, rtol=1e-4, atol=1e-3)
    text = str(module.biased.lower(a, b, bias, out))
    assert "pl.tile.load(bias, [0, c_ni], [1, 128], target_memory=pl.Mem.Mat)" in text


def test_a_k_loop_whose_accumulator_exceeds_l0c_runs_once_per_block(write_kernel):
    module, _ = write_kernel("beyond_l0c", BEYOND_L0C)
    torch.manual_seed(4)
    a = torch.randint(-3, 4, (272, 512), dtype=torch.int8)
    b = torch.randint(-3, 4, (512, 144), dtype=torch.int8)
    c = torch.zeros(272, 144, dtype=torch.int32)
    module.k_loop(a, b, c)
    assert torch.equal(c, a.int() @ b.int())
    # 144 = 3 x 48 columns: three blocks of [272, 48], each running both K steps; a [272, 256] panel
    # (68 KB) exceeds L0A and is split again.
    text = str(module.k_loop.lower(a, b, c))
    assert "for acc_ni in pl.range(0, 144, 48):" in text


def test_extract_copies_the_window_into_l0(write_kernel):
    module, _ = write_kernel("matmuls", MATMULS)
    a, b, out = torch.randn(64, 64), torch.randn(64, 32), torch.zeros(32, 32)
    module.extracted(a, b, out)
    torch.testing.assert_close(out, a[32:64, 16:64] @ b[16:64, :], rtol=1e-4, atol=1e-4)


ASSEMBLES = '''
import pypto.language as pl


@pl.jit
def acc_into_mat(x: pl.Tensor[[32, 32], pl.FP32], a: pl.Tensor[[32, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 e: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        tile_a = pl.move(pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        tile_b = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Right)
        result = pl.tile.assemble(tile_x, pl.matmul(tile_a, tile_b), [0, 16])
        # A Mat tile leaves the cube through another matmul: result @ e.
        y = pl.store(pl.matmul(result, pl.load(e, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)), [0, 0], y)
    return y


@pl.jit
def row_by_row(x: pl.Tensor[[32, 32], pl.FP32], src: pl.Tensor[[32, 16], pl.FP32],
               y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Vec)
        tile_src = pl.load(src, [0, 0], [32, 16], target_memory=pl.MemorySpace.Vec)
        for i in pl.range(32):
            row = pl.slice(tile_src, [1, 16], [i, 0])
            tile_x = pl.tile.assemble(tile_x, row, [i, 16])
        pl.store(tile_x, [0, 0], y)
    return y


@pl.jit
def out_of_bounds(x: pl.Tensor[[32, 32], pl.FP32], src: pl.Tensor[[32, 16], pl.FP32],
                  y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Vec)
        tile_src = pl.load(src, [0, 0], [32, 16], target_memory=pl.MemorySpace.Vec)
        for i in pl.range(2):
            tile_x = pl.tile.assemble(tile_x, pl.slice(tile_src, [16, 16], [i * 16, 0]), [i * 16 + 8, 0])
        pl.store(tile_x, [0, 0], y)
    return y
'''


def test_a_matmul_result_assembled_into_a_mat_tile(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, a, b, e = torch.randn(32, 32), torch.randn(32, 16), torch.randn(16, 16), torch.randn(32, 32)
    y = torch.zeros(32, 32)
    module.acc_into_mat(x, a, b, e, y)
    assembled = x.clone()
    assembled[:, 16:] = a @ b
    torch.testing.assert_close(y, assembled @ e, rtol=1e-4, atol=1e-3)


def test_rows_sliced_and_assembled_at_loop_offsets(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, src, y = torch.randn(32, 32), torch.randn(32, 16), torch.zeros(32, 32)
    module.row_by_row(x, src, y)
    expected = x.clone()
    expected[:, 16:] = src
    torch.testing.assert_close(y, expected)


def test_a_window_outside_its_tile_fails_the_run_naming_it(write_kernel):
    module, _ = write_kernel("assembles", ASSEMBLES)
    x, src, y = torch.randn(32, 32), torch.randn(32, 16), torch.zeros(32, 32)
    with pytest.raises(RuntimeError, match=r"the \[16, 16\] window at \[24, 0\] is outside the \[32, 32\] tile"):
        module.out_of_bounds(x, src, y)


SUBSCRIPTS = '''
import pypto.language as pl


@pl.jit
def reverse_rows(x: pl.Tensor[[4, 32], pl.FP32], y: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.full([4, 32], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            r = 3 - i
            t[r : r + 1, 0:32] = pl.mul(x[i : i + 1, 0:32], 2.0)
        y[0:2, 0:32] = pl.add(t, 1.0)[2:4, :]
        y[2:4, 0:32] = t[0:2, :]
    return y
'''


def test_a_window_of_a_tile_is_assigned_in_place_and_an_expression_is_sliced(write_kernel):
    module, _ = write_kernel("subscripts", SUBSCRIPTS)
    x, y = torch.randn(4, 32), torch.zeros(4, 32)
    module.reverse_rows(x, y)
    t = torch.flip(2 * x, dims=[0])
    torch.testing.assert_close(y, torch.cat([t[2:4] + 1.0, t[0:2]]), rtol=0, atol=0)
