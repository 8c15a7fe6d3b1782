"""Hand-written kernels in pto-isa's C++ tile interface (the seed-000 way: ``#include <pto/pto-inst.hpp>``,
Tiles placed in the core's buffers with TASSIGN, moved with TLOAD/TSTORE), launched with
``@pl.jit.extern`` on the simulator and compared with torch: FP32 element-wise, reductions and
broadcasts, FP16 and the conversions, a cube matmul, and the kernel's own line on a misuse."""

import importlib.util
import textwrap

import pytest
import torch

ROWS = 16  # per block
COLS = 64
BLOCKS = 2

_PRELUDE = """
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"
using namespace pto;

template <typename T>
__gm__ T* Data(__gm__ int64_t* args, int slot) {
  __gm__ ChipTensor* tensor = reinterpret_cast<__gm__ ChipTensor*>(args[slot]);
  return reinterpret_cast<__gm__ T*>(tensor->buffer.addr) + tensor->start_offset;
}
"""

# Block b works on rows [16b, 16b + 16) of x and y. Outputs: a row softmax of 0.5 x + y; where(x > y,
# sqrt|x|, relu(y) - 1 / (|y| + 1)); per block, colsum(x) - colmax(y) + colmin(x); rsqrt(x^2 + 1) *
# log(|y| + 1) / max(x, y)-scaled rows, and x with its last 24 columns padded to -inf by TLOAD.
_FP32 = _PRELUDE + """
constexpr int R = 16, C = 64, BYTES = R * C * 4;
using Vec = Tile<TileType::Vec, float, R, C>;
using RowVec = Tile<TileType::Vec, float, R, 1, BLayout::ColMajor>;
using ColVec = Tile<TileType::Vec, float, 1, C>;
using Mask = Tile<TileType::Vec, uint8_t, R, 32, BLayout::RowMajor, -1, -1>;
using Padded = Tile<TileType::Vec, float, R, C, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Min>;
using Rows = GlobalTensor<float, Shape<1, 1, 1, R, C>, Stride<R * C, R * C, R * C, C, 1>>;
using Row = GlobalTensor<float, Shape<1, 1, 1, 1, C>, Stride<C, C, C, C, 1>>;
using Narrow = GlobalTensor<float, Shape<1, 1, 1, R, 40>, Stride<R * C, R * C, R * C, C, 1>>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  const int block = get_block_idx(args);
  Rows x(Data<float>(args, 0) + block * R * C), y(Data<float>(args, 1) + block * R * C);
  Rows soft(Data<float>(args, 2) + block * R * C), pick(Data<float>(args, 3) + block * R * C);
  Row cols(Data<float>(args, 4) + block * C);
  Rows scaled(Data<float>(args, 5) + block * R * C), padded(Data<float>(args, 6) + block * R * C);
  Narrow x_narrow(Data<float>(args, 0) + block * R * C);

  Vec a, b, t, u;
  RowVec m, s;
  ColVec c0, c1;
  Mask mask(R, C / 8);
  Padded pad(R, 40);
  TASSIGN(a, 0); TASSIGN(b, BYTES); TASSIGN(t, 2 * BYTES); TASSIGN(u, 3 * BYTES);
  TASSIGN(m, 4 * BYTES); TASSIGN(s, 4 * BYTES + 64); TASSIGN(c0, 4 * BYTES + 128);
  TASSIGN(c1, 4 * BYTES + 384); TASSIGN(mask, 4 * BYTES + 640); TASSIGN(pad, 5 * BYTES);
  TLOAD(a, x);
  TLOAD(b, y);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);

  TMULS(t, a, 0.5f);  // softmax(0.5 x + y) by rows
  TADD(t, t, b);
  TROWMAX(m, t, u);
  TROWEXPANDSUB(t, t, m);
  TEXP(t, t);
  TROWSUM(s, t, u);
  TROWEXPANDDIV(t, t, s);
  TSTORE(soft, t);

  TCMP(mask, a, b, CmpMode::GT);  // where(x > y, sqrt|x|, relu(y) - 1 / (|y| + 1))
  TABS(t, a);
  TSQRT(t, t);
  TABS(u, b);
  TADDS(u, u, 1.0f);
  TRECIP(u, u);
  TRELU(m, m);  // (a no-op on the row maxima's tile, to keep TRELU's own check below)
  Vec r;
  TASSIGN(r, 6 * BYTES);
  TRELU(r, b);
  TSUB(u, r, u);
  TSEL(r, mask, t, u, m);
  TSTORE(pick, r);

  TCOLSUM(c0, a);  // colsum(x) - colmax(y) + colmin(x)
  TCOLMAX(c1, b);
  TSUB(c0, c0, c1);
  TCOLMIN(c1, a);
  TADD(c0, c0, c1);
  TSTORE(cols, c0);

  TMUL(t, a, a);  // rsqrt(x^2 + 1) * log(|y| + 1) * colexpand(colmin(x)) / max(x, y), then min(., 2)
  TADDS(t, t, 1.0f);
  TRSQRT(t, t);
  TABS(u, b);
  TADDS(u, u, 1.0f);
  TLOG(u, u);
  TMUL(t, t, u);
  TCOLEXPANDMUL(t, t, c1);
  TMAX(u, a, b);
  TDIV(t, t, u);
  TMINS(t, t, 2.0f);
  TSTORE(scaled, t);

  TLOAD(pad, x_narrow);  // 40 valid columns, the rest -inf
  pad.SetValidShape(R, C);
  TSTORE(padded, pad);
}
"""

_FP16 = _PRELUDE + """
constexpr int R = 16, C = 64;
using Half = Tile<TileType::Vec, half, R, C>;
using Float = Tile<TileType::Vec, float, R, C>;
using Int = Tile<TileType::Vec, int32_t, R, C>;
using HalfRows = GlobalTensor<half, Shape<1, 1, 1, R, C>, Stride<R * C, R * C, R * C, C, 1>>;
using FloatRows = GlobalTensor<float, Shape<1, 1, 1, R, C>, Stride<R * C, R * C, R * C, C, 1>>;
using IntRows = GlobalTensor<int32_t, Shape<1, 1, 1, R, C>, Stride<R * C, R * C, R * C, C, 1>>;

// out = half(float(x) * float(y) + 1), sum = x + y in half, and float(z) to int32 by four round modes.
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  const int block = get_block_idx(args);
  const int at = block * R * C;
  HalfRows x(Data<half>(args, 0) + at), y(Data<half>(args, 1) + at), out(Data<half>(args, 3) + at),
      sum(Data<half>(args, 4) + at);
  FloatRows z(Data<float>(args, 2) + at);
  IntRows rint(Data<int32_t>(args, 5) + at), round(Data<int32_t>(args, 6) + at), floor(Data<int32_t>(args, 7) + at),
      trunc(Data<int32_t>(args, 8) + at);
  Half a, b, h;
  Float fa, fb, fz;
  Int i;
  TASSIGN(a, 0); TASSIGN(b, 2048); TASSIGN(h, 4096);
  TASSIGN(fa, 8192); TASSIGN(fb, 12288); TASSIGN(fz, 16384); TASSIGN(i, 20480);
  TLOAD(a, x);
  TLOAD(b, y);
  TLOAD(fz, z);
  TCVT(fa, a, RoundMode::CAST_NONE);
  TCVT(fb, b, RoundMode::CAST_NONE);
  TMUL(fa, fa, fb);
  TADDS(fa, fa, 1.0f);
  TCVT(h, fa, RoundMode::CAST_RINT);
  TSTORE(out, h);
  TADD(h, a, b);
  TSTORE(sum, h);
  TCVT(i, fz, RoundMode::CAST_RINT);
  TSTORE(rint, i);
  TCVT(i, fz, RoundMode::CAST_ROUND);
  TSTORE(round, i);
  TCVT(i, fz, RoundMode::CAST_FLOOR);
  TSTORE(floor, i);
  TCVT(i, fz, RoundMode::CAST_TRUNC);
  TSTORE(trunc, i);
}
"""

# One block of 16 x 64: integer bit operations, remainders, (leaky/parametric) ReLU, three-operand,
# selection against a scalar, a partial add over a narrower tile, products and arg-reductions.
_MORE = _PRELUDE + """
constexpr int R = 16, C = 64, BYTES = R * C * 4;
using F = Tile<TileType::Vec, float, R, C>;
using I = Tile<TileType::Vec, int32_t, R, C>;
using Narrow = Tile<TileType::Vec, float, R, C, BLayout::RowMajor, -1, -1>;
using RowF = Tile<TileType::Vec, float, R, 1, BLayout::ColMajor>;
using RowI = Tile<TileType::Vec, int32_t, R, 1, BLayout::ColMajor>;
using ColI = Tile<TileType::Vec, int32_t, 1, C>;
using Mask = Tile<TileType::Vec, uint8_t, R, 32>;
template <typename T>
using G = GlobalTensor<T, Shape<1, 1, 1, R, C>, Stride<R * C, R * C, R * C, C, 1>>;
template <typename T>
using GRow = GlobalTensor<T, Shape<1, 1, 1, R, 1>, Stride<R, R, R, 1, 1>>;
template <typename T>
using GCol = GlobalTensor<T, Shape<1, 1, 1, 1, C>, Stride<C, C, C, C, 1>>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  G<int32_t> xi(Data<int32_t>(args, 0)), yi(Data<int32_t>(args, 1)), bits(Data<int32_t>(args, 4));
  G<float> xf(Data<float>(args, 2)), yf(Data<float>(args, 3)), rem(Data<float>(args, 5)), fmod(Data<float>(args, 6)),
      relu(Data<float>(args, 7)), three(Data<float>(args, 8)), sels(Data<float>(args, 9)), part(Data<float>(args, 10));
  GRow<float> prod(Data<float>(args, 11));
  GRow<int32_t> argmax(Data<int32_t>(args, 12));
  GCol<int32_t> argmin(Data<int32_t>(args, 13));
  I a, b, t;
  F x, y, u, v;
  Narrow y_left(R, C / 2);
  RowF row;
  RowI row_index;
  ColI col_index;
  Mask mask;
  TASSIGN(a, 0); TASSIGN(b, BYTES); TASSIGN(t, 2 * BYTES); TASSIGN(x, 3 * BYTES); TASSIGN(y, 4 * BYTES);
  TASSIGN(u, 5 * BYTES); TASSIGN(v, 6 * BYTES); TASSIGN(y_left, 4 * BYTES); TASSIGN(row, 7 * BYTES);
  TASSIGN(row_index, 7 * BYTES + 64); TASSIGN(col_index, 7 * BYTES + 128); TASSIGN(mask, 7 * BYTES + 512);
  TLOAD(a, xi); TLOAD(b, yi); TLOAD(x, xf); TLOAD(y, yf);

  TAND(t, a, b);  // ~(((x & y) | (x ^ 3855)) << 1) >> 2
  TXORS(a, a, 3855);
  TOR(t, t, a);
  TSHLS(t, t, 1);
  TNOT(t, t);
  TSHRS(t, t, 2);
  TSTORE(bits, t);
  TREM(u, x, y, v);
  TSTORE(rem, u);
  TFMOD(u, x, y);
  TSTORE(fmod, u);
  TLRELU(u, x, 0.1f);  // lrelu(x, 0.1) + prelu(y, x)
  TPRELU(v, y, x, v);
  TADD(u, u, v);
  TSTORE(relu, u);
  TADDSC(u, x, 2.0f, y);  // (x + 2 + y) - y + x, then - 1 + x
  TSUBC(u, u, y, x);
  TSUBSC(u, u, 1.0f, x);
  TSTORE(three, u);
  TCMPS(mask, x, 0.0f, CmpMode::GT);  // where(x > 0, x, -1)
  TSELS(u, mask, x, v, -1.0f);
  TSTORE(sels, u);
  TPARTADD(u, x, y_left);  // x + y on the first 32 columns, x after
  TSTORE(part, u);
  TMULS(u, x, 0.05f);  // prod(1 + 0.05 x) by rows
  TADDS(u, u, 1.0f);
  TROWPROD(row, u, v);
  TSTORE(prod, row);
  TROWARGMAX(row_index, x, v);
  TSTORE(argmax, row_index);
  TCOLARGMIN(col_index, y, v);
  TSTORE(argmin, col_index);
}
"""

M, K, N = 32, 64, 48

# C = A B on the cube: A and B in halves of K through L1 (Mat) into L0A/L0B (Left/Right), the second
# half accumulated into L0C with TMATMUL_ACC, C stored from the accumulator as float.
_MATMUL = _PRELUDE + """
constexpr int M = 32, K = 64, N = 48, KH = 32;
using MatA = TileMat<half, M, KH>;
using MatB = TileMat<half, KH, N>;
using A = TileLeft<half, M, KH>;
using B = TileRight<half, KH, N>;
using Acc = TileAcc<float, M, N>;
using GA = GlobalTensor<half, Shape<1, 1, 1, M, KH>, Stride<M * K, M * K, M * K, K, 1>>;
using GB = GlobalTensor<half, Shape<1, 1, 1, KH, N>, Stride<K * N, K * N, K * N, N, 1>>;
using GC = GlobalTensor<float, Shape<1, 1, 1, M, N>, Stride<M * N, M * N, M * N, N, 1>>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ half* a = Data<half>(args, 0);
  __gm__ half* b = Data<half>(args, 1);
  GC c(Data<float>(args, 2));
  MatA l1a;
  MatB l1b;
  A l0a;
  B l0b;
  Acc acc;
  TASSIGN(l1a, 0); TASSIGN(l1b, 4096); TASSIGN(l0a, 0); TASSIGN(l0b, 0); TASSIGN(acc, 0);
  for (int half_k = 0; half_k < 2; ++half_k) {
    GA ga(a + half_k * KH);
    GB gb(b + half_k * KH * N);
    TLOAD(l1a, ga);
    TLOAD(l1b, gb);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(l0a, l1a);
    TMOV(l0b, l1b);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    if (half_k == 0) TMATMUL(acc, l0a, l0b);
    else TMATMUL_ACC(acc, l0a, l0b);
  }
  set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  TSTORE(c, acc);
}
"""

# A 16 x 64 float tile (4 KiB) assigned 2 KiB below the end of the physical UB (192 KiB on a2a3).
_PAST_UB = _PRELUDE + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  Tile<TileType::Vec, float, 16, 64> tile;
  TASSIGN(tile, 192 * 1024 - 2048);
  TEXPANDS(tile, 1.0f);
}
"""

# An accumulator one row too tall for L0C (128 KiB on a2a3): 129 x 256 floats.
_PAST_L0C = _PRELUDE + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  TileAcc<float, 129, 256> acc;
  TASSIGN(acc, 0);
}
"""

_STUB_HEADER = "import pypto.language as pl\n"


def _load(tmp_path, name, source, stub):
    (tmp_path / f"{name}.cpp").write_text(textwrap.dedent(source))
    path = tmp_path / f"{name}_stub.py"
    path.write_text(_STUB_HEADER + textwrap.dedent(stub))
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    return tmp_path


def test_fp32_elementwise_reductions_and_broadcasts_match_torch(in_tmp):
    rows = ROWS * BLOCKS
    t = f"pl.Tensor[[{rows}, {COLS}], pl.FP32]"
    module = _load(in_tmp, "fp32", _FP32, f"""
        @pl.jit.extern(core_type="aiv", source="fp32.cpp")
        def k(x: {t}, y: {t}, soft: pl.Out[{t}], pick: pl.Out[{t}],
              cols: pl.Out[pl.Tensor[[{BLOCKS}, {COLS}], pl.FP32]], scaled: pl.Out[{t}],
              padded: pl.Out[{t}]) -> {t}: ...

        @pl.jit
        def entry(x: {t}, y: {t}, soft: pl.Out[{t}], pick: pl.Out[{t}],
                  cols: pl.Out[pl.Tensor[[{BLOCKS}, {COLS}], pl.FP32]], scaled: pl.Out[{t}],
                  padded: pl.Out[{t}]):
            with pl.spmd({BLOCKS}):
                soft = k(x, y, soft, pick, cols, scaled, padded)
            return soft
    """)
    torch.manual_seed(0)
    x, y = torch.randn(rows, COLS), torch.randn(rows, COLS)
    soft, pick, scaled, padded = (torch.zeros(rows, COLS) for _ in range(4))
    cols = torch.zeros(BLOCKS, COLS)
    module.entry(x, y, soft, pick, cols, scaled, padded)

    torch.testing.assert_close(soft, torch.softmax(0.5 * x + y, dim=1))
    torch.testing.assert_close(pick, torch.where(x > y, x.abs().sqrt(), y.relu() - 1 / (y.abs() + 1)))
    xb, yb = x.view(BLOCKS, ROWS, COLS), y.view(BLOCKS, ROWS, COLS)
    colmin = xb.amin(dim=1)
    torch.testing.assert_close(cols, xb.sum(dim=1) - yb.amax(dim=1) + colmin)
    expected = torch.rsqrt(x * x + 1) * torch.log(y.abs() + 1) * colmin.repeat_interleave(ROWS, dim=0)
    torch.testing.assert_close(scaled, torch.clamp(expected / torch.maximum(x, y), max=2.0))
    torch.testing.assert_close(padded[:, :40], x[:, :40], rtol=0, atol=0)
    assert torch.all(padded[:, 40:] == float("-inf"))


def test_fp16_arithmetic_and_round_modes_match_torch(in_tmp):
    rows = ROWS * BLOCKS
    h, f, i = (f"pl.Tensor[[{rows}, {COLS}], pl.{d}]" for d in ("FP16", "FP32", "INT32"))
    module = _load(in_tmp, "fp16", _FP16, f"""
        @pl.jit.extern(core_type="aiv", source="fp16.cpp")
        def k(x: {h}, y: {h}, z: {f}, out: pl.Out[{h}], sum: pl.Out[{h}], rint: pl.Out[{i}],
              round: pl.Out[{i}], floor: pl.Out[{i}], trunc: pl.Out[{i}]) -> {h}: ...

        @pl.jit
        def entry(x: {h}, y: {h}, z: {f}, out: pl.Out[{h}], sum: pl.Out[{h}], rint: pl.Out[{i}],
                  round: pl.Out[{i}], floor: pl.Out[{i}], trunc: pl.Out[{i}]):
            with pl.spmd({BLOCKS}):
                out = k(x, y, z, out, sum, rint, round, floor, trunc)
            return out
    """)
    torch.manual_seed(1)
    x, y = torch.randn(rows, COLS).half(), torch.randn(rows, COLS).half()
    z = torch.randn(rows, COLS) * 8
    z[0, :6] = torch.tensor([2.5, -2.5, 3.5, -0.5, 0.5, 1.5])  # ties: RINT to even, ROUND away from zero
    out, total = torch.zeros(rows, COLS).half(), torch.zeros(rows, COLS).half()
    rint, rounded, floor, trunc = (torch.zeros(rows, COLS, dtype=torch.int32) for _ in range(4))
    module.entry(x, y, z, out, total, rint, rounded, floor, trunc)

    torch.testing.assert_close(out, (x.float() * y.float() + 1).half(), rtol=0, atol=0)
    torch.testing.assert_close(total, x + y, rtol=0, atol=0)
    torch.testing.assert_close(rint, torch.round(z).int(), rtol=0, atol=0)
    torch.testing.assert_close(rounded, (torch.sign(z) * torch.floor(z.abs() + 0.5)).int(), rtol=0, atol=0)
    torch.testing.assert_close(floor, torch.floor(z).int(), rtol=0, atol=0)
    torch.testing.assert_close(trunc, torch.trunc(z).int(), rtol=0, atol=0)
    assert rint[0, :6].tolist() == [2, -2, 4, 0, 0, 2] and rounded[0, :6].tolist() == [3, -3, 4, -1, 1, 2]


def test_bitwise_remainders_three_operand_partial_and_arg_reductions_match_torch(in_tmp):
    f, i = (f"pl.Tensor[[{ROWS}, {COLS}], pl.{d}]" for d in ("FP32", "INT32"))
    outs = {"bits": i, "rem": f, "fmod": f, "relu": f, "three": f, "sels": f, "part": f,
            "prod": f"pl.Tensor[[{ROWS}, 1], pl.FP32]", "argmax": f"pl.Tensor[[{ROWS}, 1], pl.INT32]",
            "argmin": f"pl.Tensor[[1, {COLS}], pl.INT32]"}
    params = f"xi: {i}, yi: {i}, xf: {f}, yf: {f}, " + ", ".join(f"{n}: pl.Out[{t}]" for n, t in outs.items())
    names = "xi, yi, xf, yf, " + ", ".join(outs)
    module = _load(in_tmp, "more", _MORE, f"""
        @pl.jit.extern(core_type="aiv", source="more.cpp")
        def k({params}) -> {i}: ...

        @pl.jit
        def entry({params}):
            with pl.spmd(1):
                bits = k({names})
            return bits
    """)
    torch.manual_seed(4)
    xi, yi = torch.randint(-1000, 1000, (ROWS, COLS), dtype=torch.int32), torch.randint(0, 1000, (ROWS, COLS),
                                                                                          dtype=torch.int32)
    xf, yf = torch.randn(ROWS, COLS) * 4, torch.randn(ROWS, COLS)
    got = {n: torch.zeros(ROWS, COLS) for n in ("rem", "fmod", "relu", "three", "sels", "part")}
    got["bits"] = torch.zeros(ROWS, COLS, dtype=torch.int32)
    got["prod"], got["argmax"] = torch.zeros(ROWS, 1), torch.zeros(ROWS, 1, dtype=torch.int32)
    got["argmin"] = torch.zeros(1, COLS, dtype=torch.int32)
    module.entry(xi, yi, xf, yf, *(got[n] for n in outs))

    expected_bits = torch.bitwise_right_shift(~torch.bitwise_left_shift((xi & yi) | (xi ^ 3855), 1), 2)
    torch.testing.assert_close(got["bits"], expected_bits, rtol=0, atol=0)
    torch.testing.assert_close(got["rem"], torch.remainder(xf, yf), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got["fmod"], torch.fmod(xf, yf), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got["relu"], torch.where(xf > 0, xf, 0.1 * xf) + torch.where(yf > 0, yf, yf * xf))
    torch.testing.assert_close(got["three"], (xf + 2 + yf) - yf + xf - 1 + xf)
    torch.testing.assert_close(got["sels"], torch.where(xf > 0, xf, torch.full_like(xf, -1.0)), rtol=0, atol=0)
    torch.testing.assert_close(got["part"], torch.cat([xf[:, :32] + yf[:, :32], xf[:, 32:]], dim=1))
    torch.testing.assert_close(got["prod"], torch.prod(1 + 0.05 * xf, dim=1, keepdim=True), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got["argmax"], torch.argmax(xf, dim=1, keepdim=True).int(), rtol=0, atol=0)
    torch.testing.assert_close(got["argmin"], torch.argmin(yf, dim=0, keepdim=True).int(), rtol=0, atol=0)


def test_a_cube_matmul_through_l1_l0_and_the_accumulator_matches_torch(in_tmp):
    module = _load(in_tmp, "matmul", _MATMUL, f"""
        @pl.jit.extern(core_type="aic", source="matmul.cpp")
        def k(a: pl.Tensor[[{M}, {K}], pl.FP16], b: pl.Tensor[[{K}, {N}], pl.FP16],
              c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]: ...

        @pl.jit
        def entry(a: pl.Tensor[[{M}, {K}], pl.FP16], b: pl.Tensor[[{K}, {N}], pl.FP16],
                  c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]):
            with pl.spmd(1):
                c = k(a, b, c)
            return c
    """)
    torch.manual_seed(2)
    a, b = torch.randn(M, K).half(), torch.randn(K, N).half()
    c = torch.zeros(M, N)
    module.entry(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


def test_a_tile_assigned_past_the_end_of_ub_fails_at_the_kernel_line(in_tmp):
    t = "pl.Tensor[[4, 8], pl.FP32]"
    module = _load(in_tmp, "past_ub", _PAST_UB, f"""
        @pl.jit.extern(core_type="aiv", source="past_ub.cpp")
        def k(out: pl.Out[{t}]) -> {t}: ...

        @pl.jit
        def entry(out: pl.Out[{t}]):
            with pl.spmd(1):
                out = k(out)
            return out
    """)
    source = in_tmp / "past_ub.cpp"
    line = source.read_text().splitlines().index("  TASSIGN(tile, 192 * 1024 - 2048);") + 1
    with pytest.raises(Exception) as info:
        module.entry(torch.zeros(4, 8))
    message = str(info.value)
    assert "hand-written kernel 'k' (task " in message, message
    assert (
        f"AIV core 0): {source}:{line}: TASSIGN: a 16x64 tile of 4-byte elements at address 194560 ends at byte "
        "198656, past the end of UB (196608 bytes)"
    ) in message, message


def test_an_accumulator_larger_than_l0c_fails_at_the_kernel_line(in_tmp):
    t = "pl.Tensor[[4, 8], pl.FP32]"
    module = _load(in_tmp, "past_l0c", _PAST_L0C, f"""
        @pl.jit.extern(core_type="aic", source="past_l0c.cpp")
        def k(out: pl.Out[{t}]) -> {t}: ...

        @pl.jit
        def entry(out: pl.Out[{t}]):
            with pl.spmd(1):
                out = k(out)
            return out
    """)
    source = in_tmp / "past_l0c.cpp"
    line = source.read_text().splitlines().index("  TASSIGN(acc, 0);") + 1
    with pytest.raises(Exception) as info:
        module.entry(torch.zeros(4, 8))
    assert (
        f"AIC core 0): {source}:{line}: TASSIGN: a 129x256 tile of 4-byte elements at address 0 ends at byte "
        "132096, past the end of L0C (131072 bytes)"
    ) in str(info.value), str(info.value)
