"""Debugging outputs on the simulator: pl.dump_tag and the args dump (RunConfig(enable_dump_args=1|2|3))
with its viewer, the chip swimlane (enable_chip_swimlane), the dependency graph (enable_dep_gen), and the
log file under $ASCEND_PROCESS_LOG_PATH."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pypto.ir
from pypto.language.parser import InvalidOperationError, ParserTypeError
from pypto.runtime import DfxOptions, RunConfig, execute_compiled
from pypto.runtime import dump_viewer

KERNELS = """
import pypto.language as pl


@pl.jit
def chain(x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    tmp = pl.create_tensor([16, 32], dtype=pl.FP32)
    pl.dump_tag(tmp)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.mul(pl.load(x, [0, 0], [16, 32]), 3.0), [0, 0], tmp)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(tmp, [0, 0], [16, 32]), 1.0), [0, 0], out)
    return out


@pl.jit
def tag_input(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    pl.dump_tag(x)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [8, 16]), pl.load(y, [0, 0], [8, 16])), [0, 0], out)
    return out


@pl.jit.inline
def tag(t):
    pl.dump_tag(t)


@pl.jit
def tag_output_inline(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    tag(out)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [8, 16]), pl.load(y, [0, 0], [8, 16])), [0, 0], out)
    return out


@pl.jit
def tag_before_reshape(x: pl.Tensor[[4, 8, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
    pl.dump_tag(x)
    x2 = pl.reshape(x, [32, 16])
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.exp(pl.load(x2, [0, 0], [32, 16])), [0, 0], y)
    return y


@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    pl.dump_tag(a)
    pl.dump_tag(b)
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a[0:16, 0:16], b[0:16, 0:16])
        c[0:16, 0:16] = acc
    return c


@pl.jit
def graph(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
          z: pl.Out[pl.Tensor[[16, 32], pl.FP32]], w: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce") as produce:
        y[:, :] = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        z[:, :] = pl.add(y, 1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ordered", deps=[produce]):
        w[:, :] = pl.mul(x, 2.0)
    return y, z, w


@pl.jit
def two_blocks(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.exp(pl.load(x, [0, 0], [8, 32])), [0, 0], y)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.exp(pl.load(x, [8, 0], [8, 32])), [8, 0], y)
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("dfx_kernels", KERNELS)
    return module


def _manifest(compiled) -> dict:
    return dump_viewer.load(compiled.output_dir)


def _payload(manifest: dict, index: int) -> np.ndarray:
    return dump_viewer.read_values(manifest, index)


def _records(manifest: dict) -> list:
    return [(r["task_id"], r["stage"], r["role"], r["arg_index"], r["kind"]) for r in manifest["records"]]


def test_level_1_dumps_the_tagged_intermediate_where_it_is_written_and_read(kernels):
    x, out = torch.randn(16, 32), torch.zeros(16, 32)
    config = RunConfig(enable_dump_args=1)
    compiled = kernels.chain.compile(x, out, config=config)
    compiled(x, out)
    torch.testing.assert_close(out, x * 3 + 1)
    manifest = _manifest(compiled)
    # tmp is the output (arg 1) of task 0 and the input (arg 0) of task 1; nothing else is dumped.
    assert _records(manifest) == [
        ("0x0", "after_completion", "output", 1, "tensor"),
        ("0x1", "before_dispatch", "input", 0, "tensor"),
    ]
    assert manifest["counters"] == {
        "before_dispatch": 1, "after_completion": 1, "truncated": 0, "dropped": 0, "bytes": 2 * 16 * 32 * 4}
    for index in (0, 1):
        record = manifest["records"][index]
        assert (record["dtype"], record["shape"], record["tagged"]) == ("FLOAT32", [16, 32], True)
        torch.testing.assert_close(torch.from_numpy(_payload(manifest, index).copy()), x * 3, rtol=0, atol=0)
    assert manifest["records"][1]["bin_offset"] == 16 * 32 * 4
    kernels_of = [r["kernel"] for r in manifest["records"]]
    assert kernels_of[0] != kernels_of[1] and all(kernels_of)
    cpp = next(Path(compiled.output_dir).glob("orchestration/*.cpp")).read_text()
    assert cpp.count(".dump(tmp);\n") == 2


def test_level_1_takes_a_tagged_input_before_dispatch(kernels):
    x, y, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 16)
    compiled = kernels.tag_input.compile(x, y, out, config=RunConfig(enable_dump_args=1))
    compiled(x, y, out)
    manifest = _manifest(compiled)
    assert _records(manifest) == [("0x0", "before_dispatch", "input", 0, "tensor")]
    assert np.array_equal(_payload(manifest, 0), x.numpy())


def test_level_1_takes_an_output_tagged_in_an_inline_function_after_completion(kernels):
    x, y, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 16)
    compiled = kernels.tag_output_inline.compile(x, y, out, config=RunConfig(enable_dump_args=1))
    compiled(x, y, out)
    manifest = _manifest(compiled)
    assert _records(manifest) == [("0x0", "after_completion", "output", 2, "tensor")]
    torch.testing.assert_close(torch.from_numpy(_payload(manifest, 0).copy()), x + y, rtol=0, atol=0)


def test_a_reshape_of_a_tagged_tensor_is_another_tensor(kernels):
    x, y = torch.randn(4, 8, 16), torch.zeros(32, 16)
    compiled = kernels.tag_before_reshape.compile(x, y, config=RunConfig(enable_dump_args=1))
    compiled(x, y)
    manifest = _manifest(compiled)
    assert manifest["records"] == [] and manifest["counters"]["before_dispatch"] == 0


def test_level_2_lists_every_argument_and_level_3_only_tagged_payloads(kernels):
    x, out = torch.randn(16, 32), torch.zeros(16, 32)
    full = kernels.chain.compile(x, out, config=RunConfig(enable_dump_args=2))
    full(x, out)
    manifest = _manifest(full)
    assert _records(manifest) == [
        ("0x0", "before_dispatch", "input", 0, "tensor"),
        ("0x0", "after_completion", "output", 1, "tensor"),
        ("0x1", "before_dispatch", "input", 0, "tensor"),
        ("0x1", "after_completion", "output", 1, "tensor"),
    ]
    assert np.array_equal(_payload(manifest, 0), x.numpy())
    torch.testing.assert_close(torch.from_numpy(_payload(manifest, 3).copy()), x * 3 + 1)

    hybrid = kernels.chain.compile(x, out, config=RunConfig(enable_dump_args=3))
    hybrid(x, out)
    manifest = _manifest(hybrid)
    assert len(manifest["records"]) == 4
    assert [r["bin_size"] for r in manifest["records"]] == [0, 16 * 32 * 4, 16 * 32 * 4, 0]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_payloads_decode_to_torchs_values(kernels, capsys, dtype):
    a, b, c = torch.randn(16, 16).to(dtype), torch.randn(16, 16).to(dtype), torch.zeros(16, 16)
    compiled = kernels.mm.compile(a, b, c, config=RunConfig(platform="a5sim", enable_dump_args=1))
    compiled(a, b, c)
    manifest = _manifest(compiled)
    name = {torch.bfloat16: "BFLOAT16", torch.float16: "FLOAT16"}[dtype]
    assert [r["dtype"] for r in manifest["records"]] == [name, name]
    assert dump_viewer.main([str(compiled.output_dir), "--index", "1"]) == 0
    printed = capsys.readouterr().out
    rows = printed.split("  values:\n")[1].splitlines()
    expected = [" ".join(repr(v) for v in row) for row in b.float().tolist()]
    assert [row.strip() for row in rows] == expected


def test_viewer_table_and_filters(kernels, capsys):
    x, out = torch.randn(16, 32), torch.zeros(16, 32)
    compiled = kernels.chain.compile(x, out, config=RunConfig(enable_dump_args=2))
    compiled(x, out)
    dump_dir = Path(compiled.output_dir) / "dfx_outputs" / "args_dump"
    kernel0, kernel1 = (r["kernel"] for r in _manifest(compiled)["records"][1:3])
    assert dump_viewer.main([str(compiled.output_dir)]) == 0
    width = max(len("kernel"), len(kernel0), len(kernel1))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"args dump: {dump_dir} (level 2): 4 records, 2 before_dispatch, 2 after_completion, 0 truncated, 0 dropped"
    )
    header = "  ".join(["#", "task", "func", "kernel".ljust(width), "stage ", "role  ", "arg", "kind  ", "dtype  ",
                        "shape", "bytes"])
    assert lines[1] == header
    assert lines[2] == "  ".join(["0", "0x0 ", "0   ", kernel0.ljust(width), "before", "input ", "0  ", "tensor",
                                  "FLOAT32", "16x32", "2048"])
    assert len(lines) == 6

    assert dump_viewer.main([str(dump_dir), "--task", "0x1", "--stage", "after", "--role", "output"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[2].startswith("3  0x1")
    assert dump_viewer.main([str(dump_dir.parent), "--arg", "1"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:]] == ["1", "3"]

    assert dump_viewer.main([str(compiled.output_dir), "--index", "3", "--export"]) == 0
    exported = sorted((dump_dir / "export").glob("*.npy"))
    assert [p.name for p in exported] == ["3_task0x1_after_completion_output_arg1.npy"]
    torch.testing.assert_close(torch.from_numpy(np.load(exported[0])), x * 3 + 1)

    with pytest.raises(SystemExit):
        dump_viewer.main([str(compiled.output_dir), "--task", "zz"])
    assert "not a hexadecimal task id: 'zz'" in capsys.readouterr().err
    assert dump_viewer.main([str(Path(compiled.output_dir) / "nowhere")]) == 1
    assert "no args_dump.json under" in capsys.readouterr().err


def test_viewer_runs_as_a_module(kernels):
    x, y, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 16)
    compiled = kernels.tag_input.compile(x, y, out, config=RunConfig(enable_dump_args=1))
    compiled(x, y, out)
    result = subprocess.run([sys.executable, "-m", "pypto.runtime.dump_viewer", compiled.output_dir, "--index", "0"],
                            capture_output=True, text=True, env=os.environ.copy(), check=True)
    assert "  stage: before_dispatch\n" in result.stdout
    assert result.stdout.splitlines()[-8] == "    " + " ".join(repr(v) for v in x[0].tolist())


def test_execute_compiled_takes_dfx_options(kernels):
    x, y, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 16)
    work_dir = kernels.tag_input.compile(x, y, out).output_dir
    execute_compiled(work_dir, [x, y, out])
    assert not (Path(work_dir) / "dfx_outputs").exists()  # nothing is recorded unless asked for
    execute_compiled(work_dir, [x, y, out], dfx=DfxOptions(enable_dump_args=2, enable_chip_swimlane=True))
    manifest = dump_viewer.load(work_dir)
    assert [r["role"] for r in manifest["records"]] == ["input", "input", "output"]
    assert (Path(work_dir) / "dfx_outputs" / "merged_swimlane.json").is_file()
    assert not (Path(work_dir) / "dfx_outputs" / "deps.json").exists()
    execute_compiled(work_dir, [x, y, out], dfx=DfxOptions(enable_dep_gen=True))
    deps = json.loads((Path(work_dir) / "dfx_outputs" / "deps.json").read_text())
    assert [(t["task_id"], t["kernel_ids"]) for t in deps["tasks"]] == [("0", [-1, 0, -1])]
    assert deps["edges"] == []


@pytest.mark.parametrize("platform, aic_cores", [("a2a3sim", 24), ("a5sim", 36)])
def test_swimlane_has_one_span_per_task_on_its_core_track(kernels, platform, aic_cores):
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    compiled = kernels.two_blocks.compile(x, y, config=RunConfig(platform=platform, enable_chip_swimlane=1))
    compiled(x, y)
    torch.testing.assert_close(y, torch.exp(x))
    dfx = Path(compiled.output_dir) / "dfx_outputs"
    raw = json.loads((dfx / "chip_swimlane_records.json").read_text())
    assert raw["chip_swimlane_level"] == 1
    tasks = raw["aicore_tasks"]
    assert sorted(t["task_id"] for t in tasks) == ["0x0", "0x1"]
    assert all(t["core_type"] == "AIV" and t["core_id"] == aic_cores + t["core_index"] for t in tasks)
    assert all(0 <= t["start_ns"] <= t["end_ns"] for t in tasks)

    trace = json.loads((dfx / "merged_swimlane.json").read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == 2
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    for span in spans:
        assert span["dur"] >= 0 and span["ts"] >= 0
        assert names[span["tid"]].startswith("AIV ")
        assert span["tid"] == aic_cores + int(names[span["tid"]].split()[1])


def test_swimlane_puts_cube_tasks_on_aic_tracks(kernels):
    a, b, c = torch.randn(16, 16), torch.randn(16, 16), torch.zeros(16, 16)
    compiled = kernels.mm.compile(a, b, c, config=RunConfig(enable_chip_swimlane=True))
    compiled(a, b, c)
    trace = json.loads((Path(compiled.output_dir) / "dfx_outputs" / "merged_swimlane.json").read_text())
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == 1 and spans[0]["cat"] == "AIC"
    assert names[spans[0]["tid"]] == f"AIC {spans[0]['tid']}"  # AIC cores are numbered first


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_dep_gen_writes_the_edges_the_runtime_gives_each_submit(kernels, platform):
    x = torch.randn(16, 32)
    y, z, w = torch.zeros(16, 32), torch.zeros(16, 32), torch.zeros(16, 32)
    compiled = kernels.graph.compile(x, y, z, w, config=RunConfig(platform=platform, enable_dep_gen=True))
    compiled(x, y, z, w)
    torch.testing.assert_close(z, torch.exp(x) + 1.0)
    torch.testing.assert_close(w, x * 2.0)
    deps = json.loads((Path(compiled.output_dir) / "dfx_outputs" / "deps.json").read_text())

    # One task per submit, each an AIV kernel on lane aiv0; ids as decimal strings.
    tasks = [(t["task_id"], t["scope"], t["kernel_ids"], t["block_num"], [(a["idx"], a["type"]) for a in t["args"]])
             for t in deps["tasks"]]
    assert tasks == [
        ("0", "auto", [-1, 0, -1], 1, [(0, "INPUT"), (1, "OUTPUT_EXISTING")]),
        ("1", "auto", [-1, 1, -1], 1, [(0, "INPUT"), (1, "OUTPUT_EXISTING")]),
        ("2", "auto", [-1, 2, -1], 1, [(0, "INPUT"), (1, "OUTPUT_EXISTING")]),
    ]
    # consume reads what produce wrote (its argument 0, y); ordered shares nothing with produce (both
    # only read x) and waits for it because deps= says so.
    edges = [(e["pred"], e["succ"], e["source"], e["arg"], e["flags"]) for e in deps["edges"]]
    assert edges == [("0", "1", "tensormap", 0, ["wait"]), ("0", "2", "explicit", -1, ["wait", "retain"])]
    read = deps["edges"][0]
    assert read["overlap"] == "covered"
    assert (read["consumer_shape"], read["producer_shape"]) == ([16, 32], [16, 32])
    y_id = deps["tasks"][0]["args"][1]["tensor_id"]
    assert read["tensor_id"] == y_id == deps["tasks"][1]["args"][0]["tensor_id"]
    # x, y, z, w: one entry each, with the buffer's element count.
    assert [(t["dtype"], t["buffer_numel"]) for t in deps["tensors"]] == [("FLOAT32", "512")] * 4
    assert y_id in {t["tensor_id"] for t in deps["tensors"]}


def test_unimplemented_switches_name_themselves_and_devices_need_a_device(kernels):
    x, y, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 16)
    for switch in ("enable_pmu", "enable_scope_stats"):
        with pytest.raises(NotImplementedError, match=f"^{switch}: not supported on 'a2a3sim'"):
            kernels.tag_input(x, y, out, config=RunConfig(**{switch: 1}))
    DfxOptions(enable_dump_args=3, enable_chip_swimlane=4).check_supported("a5sim")
    with pytest.raises(NotImplementedError, match="need an Ascend device"):
        DfxOptions(enable_dump_args=1).check_supported("a2a3")
    with pytest.raises(ValueError, match="enable_dump_args must be a bool or a level 0..3"):
        RunConfig(enable_dump_args=4).dfx


def test_log_goes_to_a_file_under_ascend_process_log_path(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(KERNELS + """
import torch
from pypto.runtime import log_config
log_config.configure_log("DEBUG")
x, y, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 16)
tag_input(x, y, out)
""")
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "ASCEND_PROCESS_LOG_PATH": str(logs)}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    files = list(logs.glob("pypto-sim-*.log"))
    assert len(files) == 1
    assert "sim: running 'tag_input'" in files[0].read_text()
    assert "sim: running" not in result.stderr + result.stdout

    env["ASCEND_PROCESS_LOG_PATH"] = str(tmp_path / "missing")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"ASCEND_PROCESS_LOG_PATH='{tmp_path / 'missing'}' is not an existing directory" in result.stderr
    assert "sim: running 'tag_input'" in result.stdout  # the log stays on the console


def test_dump_tag_round_trips_through_the_printer(kernels, write_kernel):
    x, out = torch.randn(16, 32), torch.zeros(16, 32)
    text = str(kernels.chain.lower(x, out))
    assert "        pl.tensor.dump_tag(tmp)\n" in text
    module, _ = write_kernel("chain_printed", "import pypto.language as pl\n\n" + text)
    program = getattr(module, kernels.chain.lower(x, out).name)
    assert str(program) == text
    # The printed program keeps the tag: compiled with pypto.ir.compile, it dumps what the JIT did.
    compiled = pypto.ir.compile(program, platform="a2a3sim", enable_dump_args=1)
    compiled(x, out)
    assert [(r["task_id"], r["stage"]) for r in _manifest(compiled)["records"]] == [
        ("0x0", "after_completion"), ("0x1", "before_dispatch")]


MISUSE = """
import pypto.language as pl


@pl.jit
def in_kernel(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16])
        pl.dump_tag(x)
        pl.store(t, [0, 0], out)
    return out


@pl.jit
def on_scalar(x: pl.Tensor, n: pl.Scalar[pl.INT32], out: pl.Out[pl.Tensor]):
    pl.dump_tag(n)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], out)
    return out
"""


def test_dump_tag_misuse_is_reported_at_its_place(write_kernel):
    module, path = write_kernel("dump_tag_misuse", MISUSE)
    x, out = torch.randn(8, 16), torch.zeros(8, 16)
    with pytest.raises(InvalidOperationError) as info:
        module.in_kernel(x, out)
    assert info.value.message == (
        "pl.dump_tag marks an orchestration tensor for the args dump; it cannot be used inside a kernel"
    )
    assert info.value.location == f"{path}:9:9"
    with pytest.raises(ParserTypeError) as info:
        module.on_scalar(x, 3, out)
    assert info.value.message == "pl.dump_tag marks a tensor variable for the args dump, got pl.Scalar[pl.INDEX]"
    assert info.value.location == f"{path}:16:17"


_EXTERN_SOURCE = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* x_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  const __gm__ float* x = reinterpret_cast<__gm__ float*>(x_tensor->buffer.addr) + x_tensor->start_offset;
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int32_t row = get_block_idx(args);
  for (int j = 0; j < 8; ++j) out[row * 8 + j] += x[row * 8 + j] * args[2];
}
"""

_EXTERN_MODULE = """
import pypto.language as pl


@pl.jit.extern(core_type="aiv", source="accumulate.cpp")
def accumulate(x: pl.Tensor[[4, 8], pl.FP32], out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]],
               scale: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 8], pl.FP32]: ...


@pl.jit
def entry(x: pl.Tensor[[4, 8], pl.FP32], out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]):
    pl.dump_tag(out)
    with pl.spmd(4):
        out = accumulate(x, out, 3)
    return out
"""


@pytest.mark.parametrize("level", [1, 2])
def test_hand_written_kernels_are_dumped_per_block(tmp_path, level):
    (tmp_path / "accumulate.cpp").write_text(_EXTERN_SOURCE)
    (tmp_path / "stub.py").write_text(_EXTERN_MODULE)
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"dfx_extern_{level}", tmp_path / "stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, out = torch.randn(4, 8), torch.randn(4, 8)
    before = out.clone()
    compiled = module.entry.compile(x, out, config=RunConfig(enable_dump_args=level))
    compiled(x, out)
    torch.testing.assert_close(out, before + x * 3)
    manifest = _manifest(compiled)
    # Each of the 4 blocks is a task; the InOut tensor is taken before and after each.
    inout = [r for r in manifest["records"] if r["role"] == "inout"]
    assert sorted(r["task_id"] for r in inout) == sorted(["0x0", "0x1", "0x2", "0x3"] * 2)
    assert {r["stage"] for r in inout} == {"before_dispatch", "after_completion"}
    final = [i for i, r in enumerate(manifest["records"]) if r["role"] == "inout" and r["stage"] == "after_completion"]
    # The last block to finish saw every row written (blocks may run in any order); each block's
    # "after" snapshot holds at least its own row.
    for index in final:
        task = int(manifest["records"][index]["task_id"], 16)
        row = _payload(manifest, index)[task]
        np.testing.assert_allclose(row, (before + x * 3)[task].numpy(), rtol=1e-6)
    others = [r for r in manifest["records"] if r["role"] != "inout"]
    if level == 1:
        assert others == []
    else:  # x and the scalar, before each block
        assert sorted((r["kind"], r["task_id"]) for r in others) == sorted(
            [("tensor", f"0x{b}") for b in range(4)] + [("scalar", f"0x{b}") for b in range(4)])
        assert {r["value"] for r in others if r["kind"] == "scalar"} == {3}
