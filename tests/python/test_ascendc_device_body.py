"""A hand-written kernel is compiled as the device compiler sees it: __CPU_SIM is not defined, so a
kernel that keeps an empty entry for upstream's simulator under it (pypto-lib's CCE kernels do) runs
its real body here, through CANN 9's header names (basic_api/kernel_basic_intf.h, kernel_vec_intf.h,
adv_api/..., utils/std/algorithm.h) and the runtime's task_interface/buffer.h. PYPTO_EXTERN_CPU_SIM=1
brings upstream's macro back. docs/cce-kernels.md, "How it runs"."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pypto.language as pl
import torch


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/device_body.cpp")
def device_body(x: pl.Tensor[[4, 8], pl.FP32], out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
    ...


@pl.jit
def run_device_body(x: pl.Tensor[[4, 8], pl.FP32], out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.spmd(1):
        out = device_body(x, out)
    return out


def test_the_device_body_runs_rather_than_the_cpu_sim_stub(monkeypatch):
    monkeypatch.delenv("PYPTO_EXTERN_CPU_SIM", raising=False)
    torch.manual_seed(0)
    x, out = torch.randn(4, 8), torch.full((4, 8), -7.0)
    run_device_body(x, out)
    torch.testing.assert_close(out, x + x.sum(dim=1, keepdim=True))


def test_pypto_extern_cpu_sim_compiles_the_cpu_sim_branch(tmp_path):
    # A process of its own: this one has the kernel built without the macro loaded already.
    script = textwrap.dedent(f"""
        import sys, torch
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        from test_ascendc_device_body import run_device_body
        out = torch.full((4, 8), -7.0)
        run_device_body(torch.randn(4, 8), out)
        print("untouched" if torch.all(out == -7.0) else "computed")
    """)
    env = dict(os.environ, PYPTO_EXTERN_CPU_SIM="1", PYPTO_CACHE="0",
               PYPTO_PROG_BUILD_DIR=str(tmp_path / "build_output"))
    ran = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split()[-1] == "untouched", ran.stdout  # the empty entry ran
