"""MX block-scale matmul on the A5 simulator (a5sim), against a float64 reference built with torch:
FP8E4M3FN operands whose every 32 elements of K are scaled by an E8M0 exponent, the left scales held
in MX_A_ZZ blocks and the right ones in MX_B_NN blocks as the caller lays them out; the plain,
accumulating and biased forms; packed FP4 data cast to FP8 first; the casts' rounding; and what is
refused (a2a3 has no scale buffers, an FP4 operand is not multiplied natively)."""

import pytest
import torch

import pypto.language as pl
from pypto.ir import compile

M, K, N = 32, 128, 64
G = K // 32  # scale groups along K

FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]  # E2M1 magnitudes by code; bit 3 is the sign


def zz_blocks(scales):
    """[M, G] left-operand scales laid out as MX_A_ZZ: 16x2 blocks, row-major inside and over blocks."""
    m, g = scales.shape
    return scales.reshape(m // 16, 16, g // 2, 2).transpose(1, 2).reshape(m, g).contiguous()


def nn_blocks(scales):
    """[G, N] right-operand scales laid out as MX_B_NN: each 2x16 block stored column by column,
    the blocks column-major."""
    g, n = scales.shape
    return scales.reshape(g // 2, 2, n // 16, 16).permute(2, 0, 3, 1).reshape(g, n).contiguous()


def e8m0(exponents):
    return exponents.to(torch.uint8).view(torch.float8_e8m0fnu)


def reference(a, a_exp, b, b_exp):
    """sum_k a[m, k] 2^(ea[m, k/32] - 127) b[k, n] 2^(eb[k/32, n] - 127), in float64."""
    group = torch.arange(K) // 32
    a_scaled = a.double() * torch.pow(2.0, a_exp.double() - 127)[:, group]
    b_scaled = b.double() * torch.pow(2.0, b_exp.double() - 127)[group, :]
    return a_scaled @ b_scaled


def fp8_operands(seed):
    g = torch.Generator().manual_seed(seed)
    # Values E4M3 holds exactly (eighths up to 3.875), so the reference sees what the kernel does.
    a = (torch.randint(-31, 32, (M, K), generator=g) / 8).to(torch.float8_e4m3fn)
    b = (torch.randint(-31, 32, (K, N), generator=g) / 8).to(torch.float8_e4m3fn)
    a_exp = torch.randint(124, 131, (M, G), generator=g)
    b_exp = torch.randint(124, 131, (G, N), generator=g)
    return a, a_exp, b, b_exp


@pl.program
class MxProducts:
    """out = the MX product; twice = out + the same product again (matmul_mx_acc); biased = product + bias."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP8E4M3FN], sa: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[K, N], pl.FP8E4M3FN], sb: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
               bias: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
               twice: pl.Out[pl.Tensor[[M, N], pl.FP32]], biased: pl.Out[pl.Tensor[[M, N], pl.FP32]]
               ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32]]:
        lhs = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        rhs = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        lhs_scale = pl.move(pl.load(sa, [0, 0], [M, G], target_memory=pl.Mem.Mat), target_memory=pl.Mem.LeftScale)
        rhs_scale = pl.move(pl.load(sb, [0, 0], [G, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.RightScale)
        row = pl.move(pl.load(bias, [0, 0], [1, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Bias)
        product = pl.matmul_mx(lhs, lhs_scale, rhs, rhs_scale)
        out = pl.store(product, [0, 0], out)
        with_bias = pl.matmul_mx_bias(lhs, lhs_scale, rhs, rhs_scale, row)
        biased = pl.store(with_bias, [0, 0], biased)
        again = pl.matmul_mx_acc(product, lhs, lhs_scale, rhs, rhs_scale)
        twice = pl.store(again, [0, 0], twice)
        return out, twice, biased

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP8E4M3FN], sa: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
             b: pl.Tensor[[K, N], pl.FP8E4M3FN], sb: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
             bias: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
             twice: pl.Out[pl.Tensor[[M, N], pl.FP32]], biased: pl.Out[pl.Tensor[[M, N], pl.FP32]]
             ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, N], pl.FP32]]:
        out, twice, biased = self.kernel(a, sa, b, sb, bias, out, twice, biased)
        return out, twice, biased


@pl.program
class Fp4Product:
    """The left operand arrives as packed FP4 and is cast to FP8E4M3FN on the vector side first."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP4], sa: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[K, N], pl.FP8E4M3FN], sb: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
               out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        wide = pl.cast(pl.load(a, [0, 0], [M, K]), pl.FP8E4M3FN)
        lhs = pl.move(pl.move(wide, target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        rhs = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        lhs_scale = pl.move(pl.load(sa, [0, 0], [M, G], target_memory=pl.Mem.Mat), target_memory=pl.Mem.LeftScale)
        rhs_scale = pl.move(pl.load(sb, [0, 0], [G, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.RightScale)
        out = pl.store(pl.matmul_mx(lhs, lhs_scale, rhs, rhs_scale), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP4], sa: pl.Tensor[[M, G], pl.FP8E8M0, pl.MX_A_ZZ],
             b: pl.Tensor[[K, N], pl.FP8E4M3FN], sb: pl.Tensor[[G, N], pl.FP8E8M0, pl.MX_B_NN],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        out = self.kernel(a, sa, b, sb, out)
        return out


def fp4_pack(codes):
    """[R, C] codes 0..15 as torch's float4_e2m1fn_x2 [R, C/2]: element 2j in the low nibble of byte j."""
    packed = (codes[:, 1::2] << 4) | codes[:, 0::2]
    return packed.to(torch.uint8).view(torch.float4_e2m1fn_x2)


def fp4_values(codes):
    magnitude = torch.tensor(FP4_VALUES, dtype=torch.float64)[codes % 8]
    return torch.where(codes >= 8, -magnitude, magnitude)


def test_the_three_mx_forms_match_the_scaled_reference(tmp_path):
    a, a_exp, b, b_exp = fp8_operands(seed=1)
    bias = torch.randn(1, N)
    outs = [torch.full((M, N), float("nan")) for _ in range(3)]
    compiled = compile(MxProducts, platform="a5sim", output_dir=str(tmp_path / "build"))
    compiled(a, e8m0(zz_blocks(a_exp)), b, e8m0(nn_blocks(b_exp)), bias, *outs)
    want = reference(a, a_exp, b, b_exp)
    out, twice, biased = outs
    # Each product is an exact multiple of a small power of two well inside FP32's range: no rounding.
    assert torch.equal(out.double(), want)
    assert torch.equal(twice.double(), 2 * want)
    # The bias starts the FP32 sum, so each step rounds to FP32 (some 2^-12 of these magnitudes).
    assert torch.allclose(biased.double(), want + bias.double(), rtol=1e-5, atol=1e-3)
    # The build directory loads again (its lowered program, placed tiles and MX layouts, is read back).
    from pypto.runtime.build_dir import load_compiled

    again = [torch.zeros(M, N) for _ in range(3)]
    load_compiled(str(tmp_path / "build"))(a, e8m0(zz_blocks(a_exp)), b, e8m0(nn_blocks(b_exp)), bias, *again)
    assert all(torch.equal(x, y) for x, y in zip(again, outs))


def test_scales_in_block_order_are_read_per_group(tmp_path):
    # One exponent differs from the rest: only the 32 products of that group and row change.
    a, _, b, _ = fp8_operands(seed=2)
    a_exp = torch.full((M, G), 127)
    b_exp = torch.full((G, N), 127)
    a_exp[17, 3] = 129  # row 17, K 96..127: x4
    b_exp[1, 40] = 126  # column 40, K 32..63: x1/2
    outs = [torch.zeros(M, N) for _ in range(3)]
    compiled = compile(MxProducts, platform="a5sim", output_dir=str(tmp_path / "build"))
    compiled(a, e8m0(zz_blocks(a_exp)), b, e8m0(nn_blocks(b_exp)), torch.zeros(1, N), *outs)
    assert torch.equal(outs[0].double(), reference(a, a_exp, b, b_exp))
    plain = a.double() @ b.double()
    assert not torch.equal(outs[0][17].double(), plain[17]) and not torch.equal(outs[0][:, 40].double(), plain[:, 40])


def test_an_fp4_left_operand_cast_to_fp8_first(tmp_path):
    g = torch.Generator().manual_seed(3)
    codes = torch.randint(0, 16, (M, K), generator=g)
    codes.view(-1)[:16] = torch.arange(16)  # every code, -0 included
    _, a_exp, b, b_exp = fp8_operands(seed=3)
    out = torch.full((M, N), float("nan"))
    compiled = compile(Fp4Product, platform="a5sim", output_dir=str(tmp_path / "build"))
    compiled(fp4_pack(codes), e8m0(zz_blocks(a_exp)), b, e8m0(nn_blocks(b_exp)), out)
    assert torch.equal(out.double(), reference(fp4_values(codes), a_exp, b, b_exp))


@pl.program
class Casts:
    """FP32 -> FP8E4M3FN -> FP32 and FP32 -> FP4 -> FP8E4M3FN -> FP32 on the vector core."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, 64], pl.FP32], fp8: pl.Out[pl.Tensor[[8, 64], pl.FP32]],
               fp4: pl.Out[pl.Tensor[[8, 64], pl.FP32]]
               ) -> tuple[pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
        t = pl.load(x, [0, 0], [8, 64])
        fp8 = pl.store(pl.cast(pl.cast(t, pl.FP8E4M3FN), pl.FP32), [0, 0], fp8)
        fp4 = pl.store(pl.cast(pl.cast(pl.cast(t, pl.FP4), pl.FP8E4M3FN), pl.FP32), [0, 0], fp4)
        return fp8, fp4

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], fp8: pl.Out[pl.Tensor[[8, 64], pl.FP32]],
             fp4: pl.Out[pl.Tensor[[8, 64], pl.FP32]]
             ) -> tuple[pl.Tensor[[8, 64], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
        fp8, fp4 = self.kernel(x, fp8, fp4)
        return fp8, fp4


def fp4_round(values):
    """The E2M1 value nearest each of `values`, ties to the even code, beyond 6 the largest."""
    grid = torch.tensor(FP4_VALUES)
    out = []
    for v in values.flatten().tolist():
        distance = (grid - min(abs(v), 6.0)).abs()
        best = [code for code in range(8) if distance[code] == distance.min()]
        code = best[0] if len(best) == 1 else next(c for c in best if c % 2 == 0)
        out.append(-FP4_VALUES[code] if v < 0 else FP4_VALUES[code])
    return torch.tensor(out).reshape(values.shape)


def test_casts_round_to_nearest_even_and_saturate(tmp_path):
    torch.manual_seed(4)
    x = torch.randn(8, 64) * 4
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -2.5, 100.0, -1000.0])
    x.view(-1)[: ties.numel()] = ties
    fp8, fp4 = torch.zeros(8, 64), torch.zeros(8, 64)
    compiled = compile(Casts, platform="a5sim", output_dir=str(tmp_path / "build"))
    compiled(x, fp8, fp4)
    # torch rounds to nearest even as well; within E4M3's range (|x| <= 448) the two agree.
    assert torch.equal(fp8, x.to(torch.float8_e4m3fn).float())
    # FP4: the nearest of the E2M1 values, ties to the even code, beyond 6 the largest.
    want = torch.tensor([0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, -2.0, 6.0, -6.0])
    assert torch.equal(fp4.view(-1)[: ties.numel()], want)
    # A5 converts FP32 to FP4 through BF16 (its native casts), so each value is rounded twice.
    assert torch.equal(fp4, fp4_round(x.to(torch.bfloat16).float()))


def test_a2a3_has_no_scale_buffers(tmp_path):
    with pytest.raises(Exception) as failure:
        compile(MxProducts, platform="a2a3sim", output_dir=str(tmp_path / "build"))
    message = str(failure.value)
    assert "test_matmul_mx.py:66:9" in message, message
    assert ("places tile 'lhs_scale' (pl.Tile[[32, 4], pl.FP8E8M0, pl.Mem.LeftScale]) in the L0A scale buffer "
            "(LeftScale), which Ascend910B (a2a3) does not have") in message, message
    assert "pl.matmul_mx) runs on A5: compile for a5 or a5sim" in message, message


NATIVE_FP4 = '''
@pl.program
class Native:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 64], pl.FP4], s: pl.Tensor[[32, 2], pl.FP8E8M0, pl.MX_A_ZZ],
               b: pl.Tensor[[64, 32], pl.FP8E4M3FN], t: pl.Tensor[[2, 32], pl.FP8E8M0, pl.MX_B_NN],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        lhs = pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        rhs = pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        scale_l = pl.load(s, [0, 0], [32, 2], target_memory=pl.Mem.Mat)
        scale_r = pl.load(t, [0, 0], [2, 32], target_memory=pl.Mem.Mat)
        c = pl.matmul_mx(lhs, scale_l, rhs, scale_r)
        out = pl.store(c, [0, 0], out)
        return out
'''


def test_an_fp4_operand_must_be_cast_before_the_product(write_dsl):
    with pytest.raises(Exception) as failure:
        write_dsl("native_fp4", NATIVE_FP4)
    message = str(failure.value)
    assert "native_fp4.py:14:13" in message, message
    assert "the left operand of tile.matmul_mx must be FP8E4M3FN" in message, message
    assert "pl.cast(tile, pl.FP8E4M3FN)" in message, message


@pl.jit
def fp4_widened(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.cast(pl.load(a, [0, 0], [16, 64]), pl.BF16)  # A5's one native cast of FP4
    return out


def test_a_jit_kernel_reads_an_fp4_tensor_by_its_values():
    # The torch tensor is [16, 32] float4_e2m1fn_x2; the kernel sees the [16, 64] FP4 values it holds.
    from pypto.runtime import RunConfig

    codes = torch.randint(0, 16, (16, 64), generator=torch.Generator().manual_seed(5))
    out = torch.full((16, 64), float("nan"), dtype=torch.bfloat16)
    fp4_widened(fp4_pack(codes), out, config=RunConfig(platform="a5sim"))
    assert torch.equal(out.double(), fp4_values(codes))


@pl.program
class Fp4RowWindow:
    """Orchestration code passing a window of an FP4 tensor to a kernel (not supported yet)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[8, 64], pl.FP4],
               out: pl.Out[pl.Tensor[[8, 64], pl.BF16]]) -> pl.Tensor[[8, 64], pl.BF16]:
        out = pl.store(pl.cast(pl.load(a, [0, 0], [8, 64]), pl.BF16), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP4],
             out: pl.Out[pl.Tensor[[8, 64], pl.BF16]]) -> pl.Tensor[[8, 64], pl.BF16]:
        top = pl.slice(a, [8, 64], [8, 0])
        out = self.kernel(top, out)
        return out


def test_orchestration_code_does_not_view_an_fp4_tensor(tmp_path):
    # The runtime counts an FP4 tensor's bytes and a view its values; the window is refused where it
    # is written rather than failing when it runs.
    with pytest.raises(Exception) as failure:
        compile(Fp4RowWindow, platform="a5sim", output_dir=str(tmp_path / "build"))
    message = str(failure.value)
    assert "pl.slice in orchestration code slices the FP4 tensor 'a', which orchestration code cannot view yet" \
        in message, message
    with open(__file__) as source:
        line = next(i for i, text in enumerate(source, 1) if "top = pl.slice(a" in text)
    assert f"test_matmul_mx.py:{line}:15" in message, message
