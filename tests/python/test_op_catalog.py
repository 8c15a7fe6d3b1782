"""The op catalog end to end on the simulator, each family checked against torch."""

import pytest
import torch
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl


@pl.jit
def silu(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        e = pl.exp(pl.mul(t, -1.0))
        sig = pl.recip(pl.add(e, 1.0))
        pl.store(pl.mul(t, sig), [0, 0], out)
    return out


@pl.jit
def unary_chain(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        a = pl.abs(t)
        r = pl.rsqrt(pl.add(a, 1.0))
        l = pl.log(pl.sqrt(pl.add(a, 2.0)))
        m = pl.maximum(pl.relu(pl.neg(t)), pl.minimums(r, 0.75))
        pl.store(pl.sub(pl.add(m, l), pl.divs(t, 4.0)), [0, 0], out)
    return out


@pl.jit
def softmax(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        mx: pl.Tile[[64, 1], pl.FP32] = pl.row_max(t, tmp)
        e = pl.exp(pl.row_expand_sub(t, mx))
        s: pl.Tile[[64, 1], pl.FP32] = pl.row_sum(e, tmp)
        pl.store(pl.row_expand_div(e, s), [0, 0], out)
    return out


@pl.jit
def layer_norm(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        g = pl.load(gamma, [0, 0], [1, 64])
        b = pl.load(beta, [0, 0], [1, 64])
        tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mean = pl.reshape(pl.mul(pl.reshape(pl.row_sum(t, tmp), [1, 32]), 1.0 / 64), [32, 1])
        centered = pl.row_expand_sub(t, mean)
        var_t = pl.mul(pl.reshape(pl.row_sum(pl.mul(centered, centered), tmp), [1, 32]), 1.0 / 64)
        std = pl.reshape(pl.sqrt(pl.add(var_t, 1e-5)), [32, 1])
        scaled = pl.col_expand_mul(pl.row_expand_div(centered, std), g)
        pl.store(pl.add(scaled, pl.col_expand(scaled, b)), [0, 0], out)
    return out


@pl.jit
def column_stats(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        total = pl.add(pl.col_sum(t), pl.col_max(t))
        pl.store(pl.sub(pl.col_expand_sub(t, total), pl.full([16, 32], dtype=pl.FP32, value=0.5)), [0, 0], out)
    return out


@pl.jit
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [0, 0], [32, 48], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        acc = pl.matmul_acc(acc, pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


@pl.jit.incore
def mm_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    a1 = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
    b1 = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
    acc = pl.matmul(pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
    pl.store(acc, [0, 0], out)
    return out


@pl.jit.incore
def bias_relu_scaled(x: pl.Tensor, bias: pl.Tensor, scale: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    t = pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(bias, [0, 0], [32, 32]))
    pl.store(pl.mul(pl.relu(t), scale), [0, 0], out)
    return out


@pl.jit
def fused_linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    mm = pl.create_tensor([32, 32], dtype=pl.FP32)
    mm = mm_kernel(x, w, mm)
    half = pl.create_tensor([32, 32], dtype=pl.FP32)
    half = bias_relu_scaled(mm, bias, 0.5, half)
    y = bias_relu_scaled(half, bias, 3.0, y)
    return y


@pl.jit
def cast_round_trip(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        h = pl.cast(t, target_type=pl.BF16, mode="round")
        pl.store(pl.cast(h, pl.FP32), [0, 0], out)
    return out


@pl.jit
def wrap_angles(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        r = pl.fmod(t, 6.0)
        shifted = pl.add(r, 6.0)
        tmp = pl.create_tile([1, 32], dtype=pl.UINT8, target_memory=pl.Mem.Vec)
        pl.store(pl.tile.sel(pl.cmp(r, 0.0, cmp_type=2), shifted, r, tmp), [0, 0], out)
    return out


@pl.jit
def bucket_hash(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        tmp = pl.create_tile([16, 32], dtype=pl.INT32, target_memory=pl.Mem.Vec)
        h = pl.xor(pl.shl(t, 5), pl.shr(t, 3), tmp)
        h = pl.or_(pl.and_(h, 0xFFFF), pl.shl(pl.and_(t, 1), 16))
        pl.store(pl.rem(h, 97, tmp), [0, 0], out)
    return out
'''


kernels = kernels_fixture("op_catalog_kernels.py", KERNELS)


def test_exp_and_recip_build_silu_to_1e_5(kernels):
    x = torch.randn(32, 64)
    out = torch.zeros_like(x)
    kernels.silu(x, out)
    torch.testing.assert_close(out, x * torch.sigmoid(x), rtol=1e-5, atol=1e-5)


def test_unary_and_scalar_forms(kernels):
    t = torch.randn(16, 32)
    out = torch.zeros_like(t)
    kernels.unary_chain(t, out)
    a = t.abs()
    m = torch.maximum(torch.relu(-t), torch.clamp(torch.rsqrt(a + 1.0), max=0.75))
    expected = m + torch.log(torch.sqrt(a + 2.0)) - t / 4.0
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)


def test_row_reductions_and_broadcasts_make_softmax(kernels):
    x = torch.randn(64, 64) * 4
    out = torch.zeros_like(x)
    kernels.softmax(x, out)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-5)


def test_reshaped_row_vectors_and_column_broadcasts_make_layer_norm(kernels):
    x, gamma, beta = torch.randn(32, 64), torch.randn(1, 64), torch.randn(1, 64)
    out = torch.zeros_like(x)
    kernels.layer_norm(x, gamma, beta, out)
    expected = torch.nn.functional.layer_norm(x, (64,), gamma[0], beta[0], eps=1e-5)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)


def test_column_reductions_and_full(kernels):
    x = torch.randn(16, 32)
    out = torch.zeros_like(x)
    kernels.column_stats(x, out)
    total = x.sum(dim=0, keepdim=True) + x.amax(dim=0, keepdim=True)
    torch.testing.assert_close(out, x - total - 0.5, rtol=1e-5, atol=1e-5)


def test_matmul_and_matmul_acc_on_the_cube_path(kernels):
    a, b = torch.randn(64, 32), torch.randn(32, 48)
    c = torch.zeros(64, 48)
    kernels.matmul(a, b, c)
    torch.testing.assert_close(c, 2 * (a @ b), rtol=1e-4, atol=1e-4)


def test_incore_kernels_with_intermediates_and_scalar_arguments(kernels):
    x, w, bias = torch.randn(32, 32), torch.randn(32, 32), torch.randn(32, 32)
    y = torch.zeros(32, 32)
    kernels.fused_linear(x, w, bias, y)
    half = torch.relu(x @ w + bias) * 0.5
    torch.testing.assert_close(y, torch.relu(half + bias) * 3.0, rtol=1e-4, atol=1e-4)


def test_cast_rounds_to_bf16(kernels):
    x = torch.randn(16, 16)
    out = torch.zeros_like(x)
    kernels.cast_round_trip(x, out)
    torch.testing.assert_close(out, x.to(torch.bfloat16).to(torch.float32), rtol=0, atol=0)


def test_fmod_cmp_and_sel_make_a_floored_remainder(kernels):
    x = torch.randn(16, 32) * 20
    out = torch.zeros_like(x)
    kernels.wrap_angles(x, out)
    torch.testing.assert_close(out, torch.remainder(x, 6.0), rtol=1e-6, atol=1e-5)


def test_shifts_bitwise_ops_and_rem_make_a_bucket_hash(kernels):
    x = torch.randint(-(2**31), 2**31 - 1, (16, 32), dtype=torch.int32)
    out = torch.zeros_like(x)
    kernels.bucket_hash(x, out)
    h = torch.bitwise_xor(x << 5, x >> 3)
    h = (h & 0xFFFF) | ((x & 1) << 16)
    assert torch.equal(out, torch.remainder(h, 97))


def test_calling_an_incore_kernel_directly_says_how_to_use_it(kernels):
    with pytest.raises(TypeError, match="mm_kernel is a @pl.jit.incore function: call it from a @pl.jit function"):
        kernels.mm_kernel(torch.zeros(32, 32), torch.zeros(32, 32), torch.zeros(32, 32))


CONCAT = '''
import pypto.language as pl


@pl.jit
def side_by_side(a: pl.Tensor[[32, 16], pl.BF16], b: pl.Tensor[[32, 48], pl.BF16],
                 c: pl.Out[pl.Tensor[[32, 64], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        joined: pl.Tile[[32, 64], pl.BF16] = pl.concat(pl.load(a, [0, 0], [32, 16]), pl.load(b, [0, 0], [32, 48]))
        pl.store(joined, [0, 0], c)
    return c


@pl.jit
def rows_differ(a: pl.Tensor[[32, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.concat(pl.load(a, [0, 0], [32, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
    return c


@pl.jit
def products_side_by_side(q: pl.Tensor[[16, 64], pl.BF16], k: pl.Tensor[[64, 256], pl.BF16],
                          c: pl.Out[pl.Tensor[[16, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        q_tile = pl.load(q, [0, 0], [16, 64])
        left = pl.matmul(q_tile, pl.load(k, [0, 0], [64, 128]), out_dtype=pl.FP32)
        right = pl.matmul(q_tile, pl.load(k, [0, 128], [64, 128]), out_dtype=pl.FP32)
        pl.store(pl.concat(left, right), [0, 0], c)
    return c
'''


def test_concat_puts_two_tiles_side_by_side(write_kernel):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_kernel("concat_kernels", CONCAT)
    a, b = torch.randn(32, 16).bfloat16(), torch.randn(32, 48).bfloat16()
    c = torch.zeros(32, 64, dtype=torch.bfloat16)
    module.side_by_side(a, b, c)
    assert torch.equal(c, torch.cat([a, b], dim=1))
    with pytest.raises(ParserTypeError) as error:
        module.rows_differ(torch.randn(32, 16), torch.randn(16, 16), torch.zeros(32, 32))
    assert error.value.message == (
        "pl.concat: the tiles must be 2-D tiles with the same rows and dtype, got "
        "pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] and pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]")
    assert error.value.location == f"{path}:18:18"


def test_concat_of_two_matmul_products(write_kernel):
    # The products are Acc tiles; pl.concat reads them in Vec, as upstream moves them there.
    module, _ = write_kernel("concat_kernels", CONCAT)
    q, k = torch.randn(16, 64).bfloat16(), torch.randn(64, 256).bfloat16()
    c = torch.zeros(16, 256)
    module.products_side_by_side(q, k, c)
    expected = torch.cat([q.float() @ k[:, :128].float(), q.float() @ k[:, 128:].float()], dim=1)
    torch.testing.assert_close(c, expected, rtol=1e-5, atol=1e-4)


TRANSPOSES = '''
import pypto.language as pl


@pl.jit
def flipped(a: pl.Tensor[[16, 48], pl.FP16], out: pl.Out[pl.Tensor[[48, 16], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.transpose(pl.load(a, [0, 0], [16, 48]), 1, 0), [0, 0], out)
    return out


@pl.jit
def k_transposed(q: pl.Tensor[[16, 32], pl.FP32], k: pl.Tensor[[64, 32], pl.FP32],
                 s: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        k_mat = pl.load(k, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        kt = pl.tile.transpose_view(k_mat)
        pl.store(pl.matmul(pl.load(q, [0, 0], [16, 32], target_memory=pl.Mem.Mat), kt), [0, 0], s)
    return s


@pl.jit
def same_axis(a: pl.Tensor[[16, 48], pl.FP32], out: pl.Out[pl.Tensor[[48, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.transpose(pl.load(a, [0, 0], [16, 48]), -1, 1), [0, 0], out)
    return out
'''


def test_transposes_swap_rows_and_columns(write_kernel):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_kernel("transpose_kernels", TRANSPOSES)
    a, out = torch.randn(16, 48).half(), torch.zeros(48, 16, dtype=torch.float16)
    module.flipped(a, out)
    assert torch.equal(out, a.t())
    q, k, s = torch.randn(16, 32), torch.randn(64, 32), torch.zeros(16, 64)
    module.k_transposed(q, k, s)
    torch.testing.assert_close(s, q @ k.t())
    with pytest.raises(ParserTypeError) as error:
        module.same_axis(torch.randn(16, 48), torch.zeros(48, 16))
    assert error.value.message == "pl.transpose: a 2-D tile transposes axes 0 and 1 (or -2 and -1), got -1 and 1"
    assert error.value.location == f"{path}:25:18"


FULL_OF_NARROW_TYPES = '''
import pypto.language as pl


@pl.jit
def fills(half: pl.Out[pl.Tensor[[16, 32], pl.FP16]], brain: pl.Out[pl.Tensor[[16, 32], pl.BF16]],
          small: pl.Out[pl.Tensor[[16, 32], pl.INT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        half[:, :] = pl.full([16, 32], dtype=pl.FP16, value=-2.25)
        brain[:, :] = pl.full([16, 32], dtype=pl.BF16, value=0.1)
        small[:, :] = pl.full([16, 32], dtype=pl.INT8, value=-7)
    return half, brain, small
'''


def test_full_fills_types_without_arithmetic_with_the_rounded_constant(write_kernel):
    module, _ = write_kernel("narrow_fills", FULL_OF_NARROW_TYPES)
    half = torch.zeros(16, 32, dtype=torch.float16)
    brain = torch.zeros(16, 32, dtype=torch.bfloat16)
    small = torch.zeros(16, 32, dtype=torch.int8)
    module.fills(half, brain, small)
    assert torch.equal(half, torch.full((16, 32), -2.25, dtype=torch.float16))
    assert torch.equal(brain, torch.full((16, 32), 0.1, dtype=torch.bfloat16))  # 0.1 rounded to BF16
    assert torch.equal(small, torch.full((16, 32), -7, dtype=torch.int8))


EXPAND_CLONES = '''
import pypto.language as pl


@pl.jit
def clone_along(x0: pl.Tensor[[1, 8, 16], pl.FP32], x1: pl.Tensor[[4, 1, 16], pl.FP32],
                x2: pl.Tensor[[4, 8, 1], pl.FP32], same: pl.Tensor[[4, 8, 16], pl.FP32],
                y0: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]], y1: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]],
                y2: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]], y3: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y0 = pl.expand_clone(x0, y0)
        y1 = pl.expand_clone(x1, y1)
        y2 = pl.tensor.expand_clone(x2, y2)
        y3 = pl.expand_clone(same, y3)
    return y0, y1, y2, y3


@pl.jit
def clone_two_dims(x: pl.Tensor[[1, 8, 1], pl.FP32], y: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.expand_clone(x, y)
    return y
'''


def test_expand_clone_copies_the_input_along_its_unit_dimension(write_kernel):
    module, _ = write_kernel("expand_clones", EXPAND_CLONES)
    x0, x1, x2, same = torch.randn(1, 8, 16), torch.randn(4, 1, 16), torch.randn(4, 8, 1), torch.randn(4, 8, 16)
    outs = [torch.empty(4, 8, 16) for _ in range(4)]
    module.clone_along(x0, x1, x2, same, *outs)
    assert torch.equal(outs[0], x0.expand(4, 8, 16))
    assert torch.equal(outs[1], x1.expand(4, 8, 16))
    assert torch.equal(outs[2], x2.expand(4, 8, 16))
    assert torch.equal(outs[3], same)


def test_expand_clone_along_two_dimensions_is_refused_at_the_call(write_kernel):
    from pypto.language.parser.diagnostics import InvalidOperationError

    module, path = write_kernel("expand_clones", EXPAND_CLONES)
    with pytest.raises(InvalidOperationError) as error:
        module.clone_two_dims(torch.randn(1, 8, 1), torch.empty(4, 8, 16))
    assert error.value.message == ("pl.expand_clone copies along one dimension, but the input "
                                   "pl.Tensor[[1, 8, 1], pl.FP32] has extent 1 in dimensions 0 and 2 of the target "
                                   "pl.Tensor[[4, 8, 16], pl.FP32]")
    assert error.value.location == f"{path}:21:13"
