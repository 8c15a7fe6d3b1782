"""Every PTO module a compile writes parses with MLIR's own parser.

Next to each ``kernels/<aic|aiv>/<kernel>.pto`` (the custom syntax ptoas reads) a compile writes
``<kernel>.generic.mlir``, the same module with its pto ops in MLIR's generic form. ``mlir-opt-16
--allow-unregistered-dialect`` (Debian's mlir-16-tools, which ./dev installs) parses and verifies
that form without the PTO dialect: SSA values defined before use and used at their defined types,
well-formed regions, the builtin, func, arith and scf ops checked by their own verifiers. Here real
DSL programs of every construct the backend lowers are compiled and each module is run through it.
"""

import os
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
import torch

import pypto.ir
from pypto.runtime import RunConfig
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl

M, K, N, K_TILE = 32, 128, 48, 32


@pl.jit
def elementwise(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 64])
        tb = pl.load(b, [0, 0], [32, 64])
        t = pl.maximum(pl.exp(pl.mul(pl.add(ta, tb), 0.5)), pl.rsqrt(pl.abs(tb)))
        t = pl.sub(pl.minimums(t, 4.0), pl.full([32, 64], dtype=pl.FP32, value=-1.5))
        h = pl.cast(t, target_type=pl.BF16, mode="round")
        pl.store(pl.cast(h, pl.FP32), [0, 0], c)
    return c


@pl.jit
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b1 = pl.load(b, [0, 0], [32, 48], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        acc = pl.matmul_acc(acc, pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def loops(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(1, 4, 2):
            for j in pl.parallel(0, 64, 32):
                row = i * 32
                t = pl.load(a, [row, j], [32, 32])
                pl.store(pl.add(t, t), [row - 32, (j + 32) % 64], c)
    return c


@pl.jit
def branches(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = x[i * 16 : i * 16 + 16, :]
            if i == 0:
                u = pl.mul(t, 2.0)
            else:
                u = pl.add(t, 1.0)
            y[i * 16 : i * 16 + 16, :] = u
    return y


@pl.jit
def jumps(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        n = 0
        for i in pl.range(4):
            if i == 3:
                break
            if i == 1:
                continue
            n = n + i
            y[i * 16 : i * 16 + 16, :] = pl.add(x[n : n + 16, :], 1.0)
    return y


@pl.jit
def countdown_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
        r = 48
        while r >= 0:
            acc = pl.add(acc, x[r : r + 16, :])
            r = r - 16
        y[0:16, :] = acc
    return y


@pl.jit
def gemm(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kb in pl.range(K // K_TILE):
            k0 = kb * K_TILE
            a_mat = pl.load(a, [0, k0], [M, K_TILE], target_memory=pl.Mem.Mat)
            b_mat = pl.load(b, [k0, 0], [K_TILE, N], target_memory=pl.Mem.Mat)
            tile_a = pl.move(a_mat, target_memory=pl.Mem.Left)
            tile_b = pl.move(b_mat, target_memory=pl.Mem.Right)
            if kb == 0:
                acc = pl.matmul(tile_a, tile_b)
            else:
                acc = pl.matmul_acc(acc, tile_a, tile_b)
        c[0:M, 0:N] = acc
    return c


@pl.jit
def reductions(x: pl.Tensor, gamma: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        g = pl.load(gamma, [0, 0], [1, 64])
        tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mx: pl.Tile[[64, 1], pl.FP32] = pl.row_max(t, tmp)
        e = pl.exp(pl.row_expand_sub(t, mx))
        s: pl.Tile[[64, 1], pl.FP32] = pl.row_sum(e, tmp)
        inv = pl.recip(s)
        scaled = pl.col_expand_mul(pl.row_expand_mul(e, inv), g)
        cols = pl.add(pl.col_sum(scaled), pl.col_max(scaled))
        pl.store(pl.col_expand_sub(scaled, cols), [0, 0], out)
    return out


@pl.jit
def topk(scores: pl.Tensor[[8, 512], pl.FP32], vals: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
         idx: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        idx_init = pl.arange(0, [1, 512], dtype=pl.UINT32)
        for r in pl.range(8):
            s = pl.sort32(scores[r : r + 1, :], idx_init)
            s = pl.mrgsort(s, block_len=64)
            s = pl.mrgsort(s, block_len=256)
            pairs = s[:, 0:32]
            vals[r : r + 1, :] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P0101)
            idx[r : r + 1, :] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
    return vals, idx


@pl.jit
def countdown(y: pl.Out[pl.Tensor[[1, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.arange(100, [1, 32], descending=True)
    return y


@pl.jit
def blocks(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for blk in pl.spmd(4):
        t = pl.load(a, [blk * 16, 0], [16, 64])
        pl.store(pl.exp(t), [blk * 16, 0], b)
    return b


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
    y = bias_relu_scaled(mm, bias, 0.5, y)
    return y


@pl.jit
def staged(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cube_part"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vector_part"):
        out[:] = pl.add(acc, bias)
    return out


@pl.program
class TwoKernels:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        tmp: pl.Tensor[[32, 16], pl.FP32] = pl.tensor.create([32, 16], dtype=pl.FP32)
        tmp_1: pl.Tensor[[32, 16], pl.FP32] = self.scale(x, 2.0, tmp)
        out_1: pl.Tensor[[32, 16], pl.FP32] = self.shift(tmp_1, out)
        return out_1

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[32, 16], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(2):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 16])
            pl.tile.store(pl.tile.muls(t, s), [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        t: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 16])
        pl.tile.store(pl.tile.adds(t, 1.0), [0, 0], out)
        return out
'''


def _f32(*shape):
    return torch.zeros(*shape)


def _f16(*shape):
    return torch.zeros(*shape, dtype=torch.float16)


# name: (arguments, platform, kernels it compiles to)
CASES = {
    "elementwise": (lambda: (_f32(32, 64), _f32(32, 64), _f32(32, 64)), "a2a3sim", 1),
    "matmul": (lambda: (_f32(64, 32), _f32(32, 48), _f32(64, 48)), "a2a3sim", 1),
    "loops": (lambda: (_f32(128, 64), _f32(128, 64)), "a5sim", 1),
    "branches": (lambda: (_f32(64, 32), _f32(64, 32)), "a2a3sim", 1),
    # break/continue: integer scalars carried by scf.for and merged by scf.if.
    "jumps": (lambda: (_f32(64, 32), _f32(64, 32)), "a2a3sim", 1),
    # A while loop: scf.while carrying an integer scalar, a tile updated in its buffer.
    "countdown_rows": (lambda: (_f32(64, 32), _f32(16, 32)), "a2a3sim", 1),
    "gemm": (lambda: (_f32(32, 128), _f32(128, 48), _f32(32, 48)), "a2a3sim", 1),
    "reductions": (lambda: (_f32(64, 64), _f32(1, 64), _f32(64, 64)), "a2a3sim", 1),
    # Tile slices (pto.textract) exist on a5 only.
    "topk": (lambda: (_f32(8, 512), _f32(8, 16), torch.zeros(8, 16, dtype=torch.int32)), "a5sim", 1),
    "countdown": (lambda: (torch.zeros(1, 32, dtype=torch.int32),), "a2a3sim", 1),
    "blocks": (lambda: (_f32(64, 64), _f32(64, 64)), "a2a3sim", 1),
    "fused_linear": (lambda: (_f32(32, 32), _f32(32, 32), _f32(32, 32), _f32(32, 32)), "a2a3sim", 2),
    "staged": (lambda: (_f16(32, 64), _f16(64, 16), _f32(32, 16), _f32(32, 16)), "a5sim", 2),
}


def mlir_opt() -> str:
    """mlir-opt 16; a failure, not a skip, when it is missing: CI installs it, and a check that
    silently does not run checks nothing."""
    for candidate in (shutil.which("mlir-opt-16"), "/usr/lib/llvm-16/bin/mlir-opt"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("mlir-opt-16 is not installed (Debian: apt-get install mlir-16-tools; ./dev setup installs it)")


def parse(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([mlir_opt(), "--allow-unregistered-dialect", str(path), "-o", os.devnull],
                          capture_output=True, text=True, timeout=60)


def assert_parses(path: Path) -> None:
    done = parse(path)
    assert done.returncode == 0 and not done.stderr, f"mlir-opt rejects {path}:\n{done.stderr}"


def generic_modules(output_dir) -> list:
    """The generic modules of a build directory; one per .pto, which every kernel must have."""
    root = Path(output_dir)
    modules = sorted(root.glob("kernels/*/*.generic.mlir"))
    assert [m.name.removesuffix(".generic.mlir") for m in modules] == \
        [p.stem for p in sorted(root.glob("kernels/*/*.pto"))]
    return modules


kernels = kernels_fixture("generic_form_kernels.py", KERNELS)


@pytest.mark.parametrize("name", CASES)
def test_every_module_of_a_program_parses(kernels, name):
    make_args, platform, kernel_count = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a module would go unchecked
        compiled = getattr(kernels, name).compile(*make_args(), config=RunConfig(platform=platform))
    modules = generic_modules(compiled.output_dir)
    assert len(modules) == kernel_count, modules
    for module in modules:
        assert '"pto.' in module.read_text()
        assert_parses(module)


def test_a_program_class_compiles_to_modules_that_parse(kernels, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = pypto.ir.compile(kernels.TwoKernels, platform="a2a3sim", output_dir=str(tmp_path / "two"))
    modules = generic_modules(compiled.output_dir)
    assert [m.name for m in modules] == ["scale.generic.mlir", "shift.generic.mlir"]
    for module in modules:
        assert_parses(module)


def test_mlir_opt_rejects_a_broken_module(kernels, tmp_path):
    """The check can fail: a use of an undefined value, and the custom syntax, are refused."""
    compiled = kernels.elementwise.compile(_f32(32, 64), _f32(32, 64), _f32(32, 64))
    (module,) = generic_modules(compiled.output_dir)
    text = module.read_text()
    assert "%ta = " in text
    broken = tmp_path / "broken.generic.mlir"
    broken.write_text(text.replace("%ta = ", "%renamed = ", 1))
    done = parse(broken)
    assert done.returncode != 0
    assert "use of undeclared SSA value name" in done.stderr, done.stderr
    # The .pto next to it is for ptoas: MLIR cannot parse an unregistered op's custom syntax.
    done = parse(module.with_name(module.name.removesuffix(".generic.mlir") + ".pto"))
    assert done.returncode != 0 and "Dialect `pto' not found for custom op" in done.stderr, done.stderr
