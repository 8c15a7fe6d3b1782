"""AscendC's cube path on the simulator (ascendc/cube_*.h): DataCopy GM -> L1 with Nd2NzParams,
LoadData into L0A/L0B (LoadData2DParams with ifTranspose for half; LoadDataWithTranspose for float),
Mmad into L0C and Fixpipe out, compared with torch, including the NZ order a kernel sees when it
copies an L1 or L0C image back to GM; img2col (LoadData3DParamsV2, 1 x 1 filter) into L0A."""

import pathlib

import pypto.language as pl
import pytest
import torch

M, K, N = 20, 40, 24
M16, K16, N16 = 32, 48, 32


@pl.jit.extern(core_type="aic", source="kernels/ascendc/cube_matmul.cpp")
def cube_matmul(a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16],
                c: pl.Out[pl.Tensor[[M, N], pl.FP32]], a_nz: pl.Out[pl.Tensor[[M16 * K16], pl.FP16]],
                c_nz: pl.InOut[pl.Tensor[[M16 * N16], pl.FP16]]) -> pl.Tensor[[M, N], pl.FP32]: ...


@pl.jit
def run_cube_matmul(a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16],
                    c: pl.Out[pl.Tensor[[M, N], pl.FP32]], a_nz: pl.Out[pl.Tensor[[M16 * K16], pl.FP16]],
                    c_nz: pl.InOut[pl.Tensor[[M16 * N16], pl.FP16]]):
    with pl.spmd(1):
        c = cube_matmul(a, b, c, a_nz, c_nz)
    return c


def nz(matrix, rows16, cols16):
    """`matrix` zero-padded to rows16 x cols16 in NZ order: column blocks of 16, each all rows."""
    padded = torch.zeros(rows16, cols16, dtype=matrix.dtype)
    padded[: matrix.shape[0], : matrix.shape[1]] = matrix
    return padded.reshape(rows16, cols16 // 16, 16).permute(1, 0, 2).reshape(-1)


def test_a_matmul_through_l1_l0a_l0b_and_l0c_matches_torch_and_l1_holds_nz_order():
    torch.manual_seed(3)
    a, b = torch.randn(M, K).half(), torch.randn(K, N).half()
    c = torch.zeros(M, N)
    a_nz = torch.full((M16 * K16,), 7.0).half()
    c_nz = torch.full((M16 * N16,), 7.0).half()
    run_cube_matmul(a, b, c, a_nz, c_nz)
    expected = a.float() @ b.float()
    torch.testing.assert_close(c, expected, rtol=1e-5, atol=1e-4)
    # L1 as DataCopy left it: NZ, the K tail of each row zero-padded to its 32-byte block.
    torch.testing.assert_close(a_nz, nz(a, M16, K16), rtol=0, atol=0)
    # Fixpipe CFG_NZ writes the mSize x nSize elements in NZ order and leaves the padding alone.
    got = c_nz.reshape(N16 // 16, M16, 16).permute(1, 0, 2).reshape(M16, N16)
    torch.testing.assert_close(got[:M, :N], expected.half(), rtol=0, atol=0)
    untouched = torch.ones(M16, N16, dtype=torch.bool)
    untouched[:M, :N] = False
    assert bool((got[untouched] == 7.0).all())


F = 16


@pl.jit.extern(core_type="aic", source="kernels/ascendc/cube_matmul_fp32_transpose.cpp")
def cube_matmul_fp32(a: pl.Tensor[[F, F], pl.FP32], b: pl.Tensor[[F, F], pl.FP32],
                     c: pl.Out[pl.Tensor[[F, F], pl.FP32]]) -> pl.Tensor[[F, F], pl.FP32]: ...


@pl.jit
def run_cube_matmul_fp32(a: pl.Tensor[[F, F], pl.FP32], b: pl.Tensor[[F, F], pl.FP32],
                         c: pl.Out[pl.Tensor[[F, F], pl.FP32]]):
    with pl.spmd(1):
        c = cube_matmul_fp32(a, b, c)
    return c


def test_load_data_with_transpose_brings_float_b_into_l0b_for_a_matmul_that_matches_torch():
    torch.manual_seed(5)
    a, b = torch.randn(F, F), torch.randn(F, F)
    c = torch.zeros(F, F)
    run_cube_matmul_fp32(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-5, atol=1e-5)


M3, K3, N3 = 32, 48, 32


@pl.jit.extern(core_type="aic", source="kernels/ascendc/cube_load3d.cpp")
def cube_load3d(a: pl.Tensor[[M3, K3], pl.FP16], b: pl.Tensor[[K3, N3], pl.FP16],
                c: pl.Out[pl.Tensor[[M3, N3], pl.FP32]],
                c_win: pl.Out[pl.Tensor[[16, N3], pl.FP32]]) -> pl.Tensor[[M3, N3], pl.FP32]: ...


@pl.jit
def run_cube_load3d(a: pl.Tensor[[M3, K3], pl.FP16], b: pl.Tensor[[K3, N3], pl.FP16],
                    c: pl.Out[pl.Tensor[[M3, N3], pl.FP32]], c_win: pl.Out[pl.Tensor[[16, N3], pl.FP32]]):
    with pl.spmd(1):
        c = cube_load3d(a, b, c, c_win)
    return c


def test_img2col_load_data_3d_brings_a_and_a_window_of_it_into_l0a_for_matmuls_that_match_torch():
    torch.manual_seed(11)
    a, b = torch.randn(M3, K3).half(), torch.randn(K3, N3).half()
    c, c_win = torch.zeros(M3, N3), torch.zeros(16, N3)
    run_cube_load3d(a, b, c, c_win)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-4)
    # Positions 16.. (mStartPt) and channels 16..48 (kStartPt, kExtension) of the feature map.
    torch.testing.assert_close(c_win, a[16:, 16:].float() @ b[16:, :].float(), rtol=1e-5, atol=1e-4)


@pl.jit.extern(core_type="aic", source="kernels/ascendc/cube_load3d_filter3.cpp")
def cube_load3d_filter3(a: pl.Tensor[[M3, K3], pl.FP16], b: pl.Tensor[[K3, N3], pl.FP16],
                        c: pl.Out[pl.Tensor[[M3, N3], pl.FP32]],
                        c_win: pl.Out[pl.Tensor[[16, N3], pl.FP32]]) -> pl.Tensor[[M3, N3], pl.FP32]: ...


@pl.jit
def run_cube_load3d_filter3(a: pl.Tensor[[M3, K3], pl.FP16], b: pl.Tensor[[K3, N3], pl.FP16],
                            c: pl.Out[pl.Tensor[[M3, N3], pl.FP32]], c_win: pl.Out[pl.Tensor[[16, N3], pl.FP32]]):
    with pl.spmd(1):
        c = cube_load3d_filter3(a, b, c, c_win)
    return c


def test_img2col_with_a_filter_the_simulator_does_not_model_fails_at_the_load():
    body = pathlib.Path(__file__).parent / "kernels" / "ascendc" / "cube_load3d_body.h"
    line = next(n for n, text in enumerate(body.read_text().splitlines(), 1) if "LoadData(a0, a1, img2col);" in text)
    with pytest.raises(Exception) as info:
        run_cube_load3d_filter3(torch.zeros(M3, K3).half(), torch.zeros(K3, N3).half(), torch.zeros(M3, N3),
                                torch.zeros(16, N3))
    assert (
        f"{body}:{line}: LoadData (LoadData3DParamsV2): the simulator models img2col with a 1 x 1 filter, stride 1, "
        "no dilation, no padding and no transpose only"
    ) in str(info.value), str(info.value)
