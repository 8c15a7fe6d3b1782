"""The API harnesses drive: build directories run by ``execute_compiled``, ``pypto.ir.compile``,
``pypto.backend``, and the modules model files import at load time."""

import ctypes
import gc
import json
from pathlib import Path

import pytest
import torch

import pypto.ir
import pypto.language as pl
from pypto.backend import BackendType, platform_for
from pypto.runtime import RunConfig, execute_compiled, load_compiled
from pypto.runtime.runner import DfxOptions
from sample_programs import ADD_KERNELS, TWICE_PROGRAM

KERNELS = ADD_KERNELS


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("harness_kernels", KERNELS)
    return module


def _args():
    return torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)


def test_a_build_directory_records_its_parameters_with_their_directions(kernels):
    x, y, out = _args()
    compiled = kernels.add.compile(x, y, out)
    manifest = json.loads((Path(compiled.output_dir) / "pypto_manifest.json").read_text())
    assert manifest["platform"] == "a2a3sim"
    assert [(p["name"], p["kind"], p["direction"], p["shape"]) for p in manifest["parameters"]] == [
        ("x", "tensor", "In", [32, 64]),
        ("y", "tensor", "In", [32, 64]),
        ("out", "tensor", "Out", [32, 64]),
    ]
    assert compiled.output_names == ["out"]


def test_execute_compiled_runs_a_build_directory_in_place(kernels):
    x, y, out = _args()
    work_dir = kernels.add.compile(x, y, out).output_dir
    execute_compiled(work_dir, [x, y, out], platform="a2a3sim", device_id=0)
    torch.testing.assert_close(out, x + y)


def test_a_build_directory_runs_again_without_its_source(kernels):
    x, y, out = _args()
    work_dir = kernels.add.compile(x, y, out).output_dir
    kernels.add.clear_cache()
    gc.collect()  # nothing of the compile is left in this process: the directory is loaded from disk
    execute_compiled(work_dir, [x, y, out])
    torch.testing.assert_close(out, x + y)


def test_an_edited_lowered_program_runs_as_edited(kernels):
    x, y, out = _args()
    work_dir = Path(kernels.add.compile(x, y, out).output_dir)
    kernels.add.clear_cache()
    gc.collect()
    lowered = work_dir / "lowered_program.py"
    lowered.write_text(lowered.read_text().replace("pl.tile.add(", "pl.tile.sub("))
    execute_compiled(work_dir, [x, y, out])
    torch.testing.assert_close(out, x - y)


def test_scalars_arrive_as_numbers_or_ctypes_and_must_match_the_compiled_value(kernels):
    x, y = torch.randn(32, 64), torch.zeros(32, 64)
    compiled = kernels.add_scalar.compile(x, 1.5, y)
    assert [(p.name, p.kind, p.dtype, p.value) for p in compiled.parameters][1] == ("a", "scalar", "FP32", 1.5)
    execute_compiled(compiled.output_dir, [x, ctypes.c_float(1.5), y])
    torch.testing.assert_close(y, x + 1.5)
    with pytest.raises(ValueError, match=r"scalar 'a' was compiled with the value 1.5 .* got 2.0"):
        execute_compiled(compiled.output_dir, [x, ctypes.c_float(2.0), y])


def test_execute_compiled_refuses_what_it_cannot_run(kernels, tmp_path):
    x, y, out = _args()
    work_dir = kernels.add.compile(x, y, out).output_dir
    with pytest.raises(FileNotFoundError, match="does not exist"):
        execute_compiled(tmp_path / "nowhere", [x, y, out])
    with pytest.raises(FileNotFoundError, match="not a pypto build directory: pypto_manifest.json is missing"):
        execute_compiled(tmp_path, [x, y, out])
    with pytest.raises(ValueError, match="was compiled for 'a2a3sim', not 'a5sim'"):
        execute_compiled(work_dir, [x, y, out], platform="a5sim")
    with pytest.raises(TypeError, match="missing argument"):
        execute_compiled(work_dir, [x, y])
    with pytest.raises(TypeError, match="unexpected keyword argument 'stream'"):
        execute_compiled(work_dir, [x, y, out], stream=3)
    with pytest.raises(NotImplementedError, match="enable_pmu"):
        execute_compiled(work_dir, [x, y, out], dfx=DfxOptions(enable_pmu=1))


def test_a_device_platform_compiles_but_running_says_a_device_is_needed(kernels):
    x, y, out = _args()
    compiled = kernels.add.compile(x, y, out, config=RunConfig(platform="a2a3"))
    assert list(Path(compiled.output_dir).glob("kernels/aiv/*.pto"))
    with pytest.raises(RuntimeError, match=r"runs on an Ascend NPU.*-p a2a3sim"):
        execute_compiled(compiled.output_dir, [x, y, out])


PROGRAM = "\nimport pypto.language as pl\n\n" + TWICE_PROGRAM


def test_ir_compile_takes_a_backend_or_a_platform(write_kernel):
    module, _ = write_kernel("twice_program", PROGRAM)
    compiled = pypto.ir.compile(module.Twice, backend_type=BackendType.Ascend950)
    assert compiled.platform == "a5sim"
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    execute_compiled(compiled.output_dir, [x, out], platform="a5sim")
    torch.testing.assert_close(out, x * 2)
    with pytest.raises(TypeError, match="unexpected option.*: tile_size"):
        pypto.ir.compile(module.Twice, platform="a2a3sim", tile_size=4)
    with pytest.raises(ValueError, match="platform 'a5sim' is Ascend950, not Ascend910B"):
        pypto.ir.compile(module.Twice, backend_type=BackendType.Ascend910B, platform="a5sim")
    with pytest.raises(TypeError, match="compile a @pl.jit function with fn.compile"):
        pypto.ir.compile(lambda: None)


def test_platforms_map_onto_backends():
    assert platform_for(BackendType.Ascend910B) == "a2a3sim"
    assert platform_for(platform="a5") == "a5"
    with pytest.raises(ValueError, match="unknown platform 'a3'"):
        platform_for(platform="a3")


def test_run_config_rejects_an_unknown_field_by_name():
    with pytest.raises(TypeError, match="unexpected keyword argument 'enable_magic'"):
        RunConfig(enable_magic=True)


def test_modules_model_files_import_load_and_refuse_at_use():
    import pypto.language.distributed as pld
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
    from pypto.runtime import benchmark, pto_isa_include_dir  # noqa: F401
    from pypto.runtime.log_config import configure_log, current_level

    config = DistributedConfig(device_ids=[0, 1], num_sub_workers=0)
    assert config.device_ids == [0, 1]
    # pld ops are read from source; called as Python they say so.
    with pytest.raises(RuntimeError, match=r"pld\.tensor\.allreduce can only be used inside a @pl.jit"):
        pld.tensor.allreduce(None)
    # Model files spell distributed parameters in annotations, evaluated when a def runs.
    assert repr(pld.DistributedTensor[[4, 16], pl.BF16]) == "pld.DistributedTensor[[4, 16], pl.BF16]"
    with pytest.raises(NotImplementedError, match="distributed"):
        DistributedCompiledProgram.from_dir("somewhere")
    with pytest.raises(NotImplementedError, match="benchmarking"):
        benchmark(None, [])
    configure_log("info")
    assert current_level() == 20
    configure_log("warn")
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        configure_log("loud")
    T = pl.dynamic("T")
    assert repr(T) == "pl.dynamic('T')"


def test_unsupported_jit_forms_decorate_and_refuse_when_used():
    @pl.jit.opaque
    def opaque_entry(x: pl.Tensor):
        ...

    @pl.jit.inline(auto_scope=False)
    def helper(x: pl.Tensor):
        return x

    with pytest.raises(NotImplementedError, match=r"opaque_entry: @pl.jit.opaque functions are not supported"):
        opaque_entry(torch.zeros(4))
    with pytest.raises(TypeError, match="unexpected option"):
        pl.jit.inline(fast=True)


def test_a_fresh_process_runs_a_build_directory_with_execute_compiled(kernels, tmp_path):
    import os
    import subprocess
    import sys

    x, y, out = _args()
    compiled = kernels.add.compile(x, y, out)
    torch.save((x, y), tmp_path / "inputs.pt")
    script = (
        "import sys, torch\n"
        "from pypto.runtime import execute_compiled\n"
        f"x, y = torch.load({str(tmp_path / 'inputs.pt')!r})\n"
        "out = torch.zeros(32, 64)\n"
        f"execute_compiled({str(compiled.output_dir)!r}, [x, y, out])\n"
        f"torch.save(out, {str(tmp_path / 'out.pt')!r})\n"
    )
    # Nothing of this process goes along: no source module, no live compiled program, no session.
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    torch.testing.assert_close(torch.load(tmp_path / "out.pt"), x + y, rtol=0, atol=0)


def test_pass_manager_module_offers_upstreams_strategy_and_the_pipeline(write_kernel, tmp_path):
    from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel, PassManager, coerce_dump_level

    assert RunConfig(strategy=OptimizationStrategy.Default).strategy is OptimizationStrategy.Default
    manager = PassManager.get_strategy(OptimizationStrategy.Default)
    assert manager.get_pass_names() == ["UnrollLoops", "CtrlFlowTransform", "FuseCreateAssembleToSlice",
                                        "FlattenCallExpr", "SplitMixedScopes", "OutlineIncoreScopes", "FlattenTileNdTo2D",
                                        "LegalizeTileCast", "InferTileMemorySpace",
                                        "AutoTileMatmulL0", "ExpandMixedKernel", "NormalizeReturnOrder",
                                        "TransposeScratchTiles", "ScatterMaskBlend", "AllocateMemoryAddr", "DeriveCallDirections", "MaterializeRuntimeScopes",
                                        "ClassifyIterArgCarry"]
    module, _ = write_kernel("twice_program_pm", PROGRAM)
    lowered = manager.run_passes(module.Twice, dump_ir=True, output_dir=tmp_path / "dump")
    assert {f.name: f.function_type for f in lowered.functions.values()}["main"] == "Orchestration"
    # Upstream's shapes: a dict from GlobalVar to Function, whose func_type is a pl.FunctionType.
    from pypto.ir import GlobalVar
    import pypto.language as pl

    main = lowered.functions[GlobalVar("main")]
    assert main.name == "main" and main.func_type is pl.FunctionType.Orchestration
    assert [gv.name for gv in lowered.functions] == [f.name for f in lowered.functions.values()]
    assert sorted(p.name for p in (tmp_path / "dump").iterdir())[-1] == "18_after_ClassifyIterArgCarry.py"
    assert coerce_dump_level(True) is PassDumpLevel.CONCISE and coerce_dump_level(False) is PassDumpLevel.NONE
    with pytest.raises(TypeError, match="strategy must be an OptimizationStrategy"):
        PassManager.get_strategy("Default")


def test_run_compiles_a_program_runs_it_and_returns_it_for_more_calls(write_kernel):
    from pypto.runtime import run

    module, _ = write_kernel("twice_program_run", PROGRAM)
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    compiled = run(module.Twice, x, out, config=RunConfig(platform="a5sim"))
    torch.testing.assert_close(out, x * 2)
    assert compiled.platform == "a5sim"
    y = torch.randn(16, 16)
    compiled(y, out)
    torch.testing.assert_close(out, y * 2)
    assert run(module.Twice).platform == "a2a3sim"  # no tensors: compiled only
