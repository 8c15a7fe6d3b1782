"""The vertical slice: a @pl.jit kernel parsed, lowered, compiled and run on the simulator."""

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig

import hello_add
from conftest import is_poison, unwritten


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_sum_matches_torch(platform):
    torch.manual_seed(1)
    x, y = torch.randn(128, 128), torch.randn(128, 128)
    out = torch.full((128, 128), float("nan"))
    hello_add.vector_add(x, y, out, config=RunConfig(platform=platform))
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


def test_compile_then_call_like_upstream_examples():
    x, y = torch.full((128, 128), 2.0), torch.full((128, 128), 3.0)
    out = torch.zeros(128, 128)
    hello_add.vector_add.compile(x, y, out, config=RunConfig())(x, y, out, config=RunConfig())
    assert torch.equal(out, torch.full((128, 128), 5.0))


def test_specialisations_are_cached_per_shape_and_platform():
    x, y, out = torch.ones(128, 128), torch.ones(128, 128), torch.empty(128, 128)
    first = hello_add.vector_add.compile(x, y, out)
    assert hello_add.vector_add.compile(x, y, out) is first
    assert hello_add.vector_add.compile(x, y, out, config=RunConfig(platform="a5sim")) is not first


def test_build_directory_holds_orchestration_and_manifest(build_dir):
    x, y, out = torch.ones(128, 128), torch.ones(128, 128), torch.empty(128, 128)
    compiled = hello_add.vector_add.compile(x, y, out)
    root = compiled.output_dir
    assert root.name.startswith("_jit_vector_add_") and root.parent == build_dir
    with open(f"{root}/orchestration/vector_add.cpp") as f:
        cpp = f.read()
    assert "params_t0.add_input(ext_x);\n    params_t0.add_input(ext_y);\n    params_t0.add_output(ext_out);\n" in cpp
    assert "rt_submit_aiv_task(0, params_t0);" in cpp
    manifest = {}
    with open(f"{root}/kernel_config.py") as f:
        exec(f.read(), manifest)
    assert manifest["ORCHESTRATION"]["function_name"] == "aicpu_orchestration_entry"
    (kernel,) = manifest["KERNELS"]
    assert (kernel["func_id"], kernel["name"], kernel["core_type"]) == (0, "vector_add_incore_0", "aiv")
    assert kernel["signature"] == ["IN", "IN", "OUT"]


def test_lower_returns_the_lowered_program():
    x, y, out = torch.ones(128, 128), torch.ones(128, 128), torch.empty(128, 128)
    program = hello_add.vector_add.lower(x, y, out)
    assert [(f.name, f.function_type) for f in program.functions.values()] == [
        ("vector_add_incore_0", "AIV"),
        ("vector_add", "Orchestration"),
    ]
    text = str(program)
    assert text.startswith("@pl.program\nclass _jit_vector_add:\n")
    assert "x_tile: pl.Tile[[128, 128], pl.FP32, pl.MemRef(0, 65536), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [128, 128])" in text
    assert "out_1: pl.Tensor[[128, 128], pl.FP32] = self.vector_add_incore_0(x, y, out" in text


def test_dump_passes_writes_the_ir_after_each_pass(build_dir):
    x, y, out = torch.ones(128, 128), torch.ones(128, 128), torch.empty(128, 128)
    compiled = hello_add.vector_add.compile(x, y, out, config=RunConfig(dump_passes=True))
    import os

    dumps = sorted(os.listdir(f"{compiled.output_dir}/passes_dump"))
    assert dumps == [
        "00_frontend.py",
        "01_after_UnrollLoops.py",
        "02_after_CtrlFlowTransform.py",
        "03_after_FuseCreateAssembleToSlice.py",
        "04_after_FlattenCallExpr.py",
        "05_after_SplitMixedScopes.py",
        "06_after_OutlineIncoreScopes.py",
        "07_after_FlattenTileNdTo2D.py",
        "08_after_LegalizeTileCast.py",
        "09_after_InferTileMemorySpace.py",
        "10_after_AutoTileMatmulL0.py",
        "11_after_ExpandMixedKernel.py",
        "12_after_NormalizeReturnOrder.py",
        "13_after_TransposeScratchTiles.py",
        "14_after_ScatterMaskBlend.py",
        "15_after_AllocateMemoryAddr.py",
        "16_after_DeriveCallDirections.py",
        "17_after_MaterializeRuntimeScopes.py",
        "18_after_ClassifyIterArgCarry.py",
    ]


def test_other_dtypes_and_shapes(write_kernel):
    module, _ = write_kernel(
        "int_kernel",
        """
import pypto.language as pl

@pl.jit
def scale(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 64])
        tb = pl.load(b, [0, 0], [32, 64])
        tc = pl.mul(ta, tb)
        pl.store(tc, [0, 0], c)
    return c
""",
    )
    a = torch.randint(-100, 100, (32, 64), dtype=torch.int32)
    b = torch.randint(-100, 100, (32, 64), dtype=torch.int32)
    c = torch.empty(32, 64, dtype=torch.int32)
    module.scale(a, b, c)
    assert torch.equal(c, a * b)


def test_a_region_of_a_larger_tensor(write_kernel):
    module, _ = write_kernel(
        "region_kernel",
        """
import pypto.language as pl

@pl.jit
def corner(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [16, 32], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        pl.store(pl.sub(ta, tb), [48, 0], c)
    return c
""",
    )
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.zeros(64, 64)
    with unwritten("output 'c' [64, 64] float32: 3584 of 4096 elements were never written: all of rows 0..47; "
                   "part of rows 48..63 (columns 32..63)"):
        module.corner(a, b, c)
    torch.testing.assert_close(c[48:64, 0:32], a[16:32, 32:64] - b[0:16, 0:32], rtol=0, atol=0)
    assert is_poison(c[:48]) and is_poison(c[:, 32:])  # the store writes its region and nothing else


def test_ops_outside_a_kernel_explain_themselves():
    with pytest.raises(RuntimeError, match="pl.add can only be used inside a @pl.jit function"):
        pl.add(1, 2)
