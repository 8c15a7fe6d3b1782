"""Traps in hand-written kernels: a crash inside one, or a call that would end the process (exit,
quick_exit, _Exit, abort, a failed assert), is a fatal error naming the kernel, task, core and signal or
call, the process carries on, and a scalar slot read as a tensor descriptor is named as such. Ctrl-C
stops a kernel that never returns."""

import textwrap

import pypto.language as pl
import pytest
import torch
from pypto.testing import TensorSpec, run

ROWS = 4
COLS = 8

_HEADER = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
"""

# args[0] is the tensor `out`, args[1] the scalar `scale`: reading args[1] as a descriptor is the bug.
_SCALAR_AS_TENSOR = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* wrong = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(wrong->buffer.addr);
  out[0] = 1.0f;
}
"""

_NULL_WRITE = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  volatile float* nowhere = nullptr;
  *nowhere = static_cast<float>(args[1]);
}
"""

_DIVIDE_BY_ZERO = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  volatile int64_t zero = args[1] - 3;  // scale is 3
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr)[0] = static_cast<float>(args[1] / zero);
}
"""

# Each ends the process its own way; the simulator fails the task instead, naming the call.
_ENDS_PROCESS = {
    "exit": "#include <cstdlib>\n" + _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { std::exit(static_cast<int>(args[1])); }
""",
    "quick_exit": "#include <cstdlib>\n" + _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { std::quick_exit(static_cast<int>(args[1])); }
""",
    "_Exit": "#include <cstdlib>\n" + _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { std::_Exit(static_cast<int>(args[1])); }
""",
    "abort": "#include <cstdlib>\n" + _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { if (args[1] == 3) std::abort(); }
""",
    "assert": "#include <cassert>\n" + _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { assert(args[1] == 4 && "scale is 4"); }
""",
}

_GOOD = _HEADER + """
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  for (int j = 0; j < 8; ++j) out[get_block_idx(args) * 8 + j] = static_cast<float>(args[1]);
}
"""


def _program(source):
    # The scalar comes first in the signature; in args[] it still follows the tensor.
    @pl.program
    class Trap:
        @pl.function(type=pl.FunctionType.AIV, external_source=source)
        def KERNEL(self, scale: pl.Scalar[pl.INDEX],
                   out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            with pl.spmd(core_num=ROWS):
                out = self.KERNEL(3, out)
            return out

    return Trap


def _run(tmp_path, name, body):
    source = tmp_path / f"{name}.cpp"
    source.write_text(textwrap.dedent(body))
    return run(_program(source), [TensorSpec("out", [ROWS, COLS], torch.float32, init_value=0.0)],
               lambda values: values["out"].fill_(3.0))


def test_a_scalar_read_as_a_tensor_descriptor_is_named(tmp_path):
    result = _run(tmp_path, "scalar_as_tensor", _SCALAR_AS_TENSOR)
    assert not result.passed
    assert "hand-written kernel 'KERNEL' (task " in result.error, result.error
    assert "crashed with SIGSEGV (invalid memory access) at address 0x3" in result.error, result.error
    # The faulting instruction's line: at -O2 GCC folds the read of `wrong->buffer.addr` (line 8 of the
    # written source) into the store through it, line 9.
    assert f"({tmp_path / 'scalar_as_tensor.cpp'}:9, in kernel_entry): it read args[1]" in result.error, result.error
    assert (
        "it read args[1], the scalar 'scale' (INDEX, value 3), as a tensor descriptor pointer. In args[] the 1 "
        "tensor(s) come first, in signature order (args[0..0]), and the scalars after them, whatever their "
        "position in the signature"
    ) in result.error, result.error


def test_a_null_write_is_reported_with_kernel_task_and_core(tmp_path):
    result = _run(tmp_path, "null_write", _NULL_WRITE)
    assert not result.passed
    assert "fatal error 203 (KernelFailed): hand-written kernel 'KERNEL' (task " in result.error, result.error
    assert "AIV core" in result.error and "crashed with SIGSEGV (invalid memory access) at address 0x0" in result.error
    assert "as a tensor descriptor" not in result.error


def test_an_integer_division_by_zero_is_reported(tmp_path):
    result = _run(tmp_path, "divide", _DIVIDE_BY_ZERO)
    assert not result.passed
    assert "crashed with SIGFPE (arithmetic error, e.g. an integer division by zero)" in result.error, result.error


def test_the_process_carries_on_after_a_crash(tmp_path):
    assert not _run(tmp_path, "null_write_first", _NULL_WRITE).passed
    result = _run(tmp_path, "good_after", _GOOD)
    assert result.passed, result.error


@pytest.mark.parametrize("call, message", [
    ("exit", "called exit(3), which would have ended the whole process; a kernel ends by returning from "
             "kernel_entry, and reports a failure through its outputs"),
    ("quick_exit", "called quick_exit(3), which would have ended the whole process"),
    ("_Exit", "called _Exit(3), which would have ended the whole process"),
    ("abort", "crashed with SIGABRT (abort(), which a failed assert() calls)"),
    ("assert", "crashed with SIGABRT (abort(), which a failed assert() calls)"),
])
def test_a_kernel_ending_the_process_fails_its_task_and_the_process_carries_on(tmp_path, call, message):
    # Each once ended the whole process without a word (exit's status, or SIGABRT's 134).
    result = _run(tmp_path, f"ends_with_{call}", _ENDS_PROCESS[call])
    assert not result.passed
    assert "fatal error 203 (KernelFailed): hand-written kernel 'KERNEL' (task " in result.error, result.error
    assert message in result.error, result.error
    assert _run(tmp_path, f"good_after_{call}", _GOOD).passed


_SPINNER = """
import signal, sys, torch
import pypto.language as pl

signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal


@pl.jit.extern(core_type="aiv", source="spin.cpp")
def spin(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]: ...


@pl.jit
def forever(c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    c = spin(c)
    return c


forever(torch.zeros(4, 8))
"""

# Tells the test that it runs (the file `started`), then never returns.
_SPIN = """
#include <cstdint>
#include <cstdio>
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
  std::fclose(std::fopen("started", "w"));
  volatile int64_t turns = 0;
  for (;;) turns = turns + 1;
}
"""


def test_ctrl_c_stops_a_kernel_that_never_returns_and_names_it(tmp_path):
    # SIGINT was ignored while kernels ran: a kernel looping forever held the process until killed.
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "spin.cpp").write_text(_SPIN)
    (tmp_path / "prog.py").write_text(_SPINNER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYPTO_CACHE": "0"}
    process = subprocess.Popen([sys.executable, "prog.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "started").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the kernel never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = process.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode != 0
    assert err.splitlines()[-1] == (
        "KeyboardInterrupt: sim: fatal error 202 (Interrupted): interrupted (SIGINT, Ctrl-C) while task 0 (kernel "
        "'spin' on AIV core 0) ran; the run stopped there, its outputs are incomplete"), err
    assert waited < 10, waited


def test_explain_abi_lists_tensors_before_scalars(tmp_path):
    from pypto.runtime import explain_abi

    source = tmp_path / "good.cpp"
    source.write_text(_GOOD)
    assert explain_abi(_program(source)) == (
        f"kernel_entry(args) of 'KERNEL' (AIV, hand-written: {source})\n"
        "  args[0]   out            tensor  InOut  pl.Tensor[[4, 8], pl.FP32]  -> its ChipTensor descriptor\n"
        "  args[1]   scale          scalar  In     pl.Scalar[pl.INDEX]         the value's 64 bits\n"
        "  args[48]  LocalContext   get_block_idx(args), get_block_num(args)\n"
        "  args[49]  GlobalContext  get_sub_block_id(args)\n"
    )
    with pytest.raises(TypeError, match="explain_abi expects a compiled or @pl.program program, got str"):
        explain_abi("KERNEL")


def test_pypto_run_explain_abi_prints_the_table_when_a_program_compiles(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from conftest import pypto_run_path

    source = tmp_path / "good.cpp"
    source.write_text(_GOOD)
    script = tmp_path / "script.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from pypto.ir import compile\nimport test_extern_traps as t\n"
        f"compile(t._program({str(source)!r}), output_dir={str(tmp_path / 'build')!r})\nprint('compiled')\n"
    )
    result = subprocess.run([pypto_run_path(), "--explain-abi", str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "compiled\n"
    assert "kernel_entry(args) of 'KERNEL' (AIV, hand-written: " in result.stderr
    assert "  args[1]   scale          scalar  In     pl.Scalar[pl.INDEX]" in result.stderr
