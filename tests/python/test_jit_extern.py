"""``@pl.jit.extern``: hand-written C++ kernels called from ``@pl.jit`` code, with their sources and
include directories resolved against the declaring file, the cache-key rule, and the errors."""

import importlib.util
import os
import textwrap

import pytest
import torch
from sample_kernels import MIXED_AIC as _AIC
from sample_kernels import MIXED_AIV as _AIV

ROWS = 4
COLS = 8

# aic/entry.cpp includes ../kernel/impl.h (relative to itself), which includes params.h (found only
# through include_dirs=["tiling"]).
_ENTRY = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
#include "../kernel/impl.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* x_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  const __gm__ float* x = reinterpret_cast<__gm__ float*>(x_tensor->buffer.addr) + x_tensor->start_offset;
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int32_t row = get_block_idx(args);
  for (int j = 0; j < kCols; ++j) out[row * kCols + j] = Combine(x[row * kCols + j], args[2]);
}
"""
_IMPL = '#pragma once\n#include "params.h"\ninline float Combine(float x, int64_t scale) { return x * kFactor + scale; }\n'
_PARAMS = "#pragma once\nstatic constexpr int kCols = 8;\nstatic constexpr float kFactor = {factor};\n"

_MODULE = """
import pypto.language as pl


@pl.jit.extern(core_type="{core}", source="aic/entry.cpp", include_dirs=["tiling"])
def scaled_rows(scale: pl.Scalar[pl.INDEX], x: pl.Tensor[[4, 8], pl.FP32],
                out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]: ...


@pl.jit
def entry(x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.spmd(4):
        out = scaled_rows(5, x, out)
    return out
"""


def _tree(root, factor=2.0, core="aiv"):
    for sub in ("aic", "kernel", "tiling"):
        (root / sub).mkdir(exist_ok=True)
    (root / "aic" / "entry.cpp").write_text(textwrap.dedent(_ENTRY))
    (root / "kernel" / "impl.h").write_text(_IMPL)
    (root / "tiling" / "params.h").write_text(_PARAMS.format(factor=factor))
    (root / "stub.py").write_text(_MODULE.format(core=core))
    return root


def _import(path, name="stub"):
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    # Build directories land in the test's own directory.
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    monkeypatch.chdir(tmp_path)  # relative paths below must not depend on it: it is not the stub's dir
    return tmp_path


@pytest.mark.parametrize("core", ["aiv", "aic"])
def test_a_multi_file_kernel_with_include_dirs_matches_torch(in_tmp, core):
    (in_tmp / "src").mkdir()
    module = _import(_tree(in_tmp / "src", core=core) / "stub.py")
    x = torch.randn(ROWS, COLS)
    out = torch.zeros(ROWS, COLS)
    module.entry(x, out)
    torch.testing.assert_close(out, x * 2.0 + 5, rtol=0, atol=0)


def test_editing_an_included_header_recompiles_and_nothing_else_does(in_tmp):
    (in_tmp / "src").mkdir()
    root = _tree(in_tmp / "src")
    module = _import(root / "stub.py")
    x = torch.randn(ROWS, COLS)
    first = module.entry.compile(x, torch.zeros(ROWS, COLS))
    # A file in an include directory that nothing includes: the same compiled program.
    (root / "tiling" / "unused.h").write_text("#error never included\n")
    (root / "notes.txt").write_text("unrelated\n")
    assert module.entry.compile(x, torch.zeros(ROWS, COLS)) is first
    # The header two includes deep: a new program, with the new constant.
    (root / "tiling" / "params.h").write_text(_PARAMS.format(factor=3.0))
    second = module.entry.compile(x, torch.zeros(ROWS, COLS))
    assert second is not first
    out = torch.zeros(ROWS, COLS)
    second(x, out)
    torch.testing.assert_close(out, x * 3.0 + 5, rtol=0, atol=0)


def test_the_build_directory_runs_again_with_its_include_dirs(in_tmp):
    from pypto.runtime import execute_compiled

    (in_tmp / "src").mkdir()
    module = _import(_tree(in_tmp / "src") / "stub.py")
    x = torch.randn(ROWS, COLS)
    compiled = module.entry.compile(x, torch.zeros(ROWS, COLS))
    config = open(os.path.join(compiled.output_dir, "kernel_config.py")).read()
    assert f'"extra_include_dirs": ["{in_tmp / "src" / "tiling"}"]' in config, config
    assert f'"source": "{in_tmp / "src" / "aic" / "entry.cpp"}"' in config
    out = torch.zeros(ROWS, COLS)
    execute_compiled(compiled.output_dir, [x, out])
    torch.testing.assert_close(out, x * 2.0 + 5, rtol=0, atol=0)


def _declare(tmp_path, decorator, signature="(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]",
             body="..."):
    (tmp_path / "k.cpp").write_text('extern "C" void kernel_entry(long* args) { (void)args; }\n')
    (tmp_path / "inc").mkdir(exist_ok=True)
    path = tmp_path / "decl.py"
    path.write_text(
        "import pypto.language as pl\n\n"
        f"@pl.jit.extern({decorator})\ndef k{signature}:\n    {body}\n\n"
        "@pl.jit\ndef entry(out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):\n    out = k(out)\n    return out\n"
    )
    return path


@pytest.mark.parametrize(
    "decorator, error, message",
    [
        ('core_type="aiv", source="missing.cpp"', ValueError, "@pl.jit.extern source file not found: {dir}/missing.cpp"),
        ('core_type="aiv"', ValueError, "@pl.jit.extern(core_type='aiv') requires source="),
        ('core_type="gpu", source="k.cpp"', ValueError,
         "@pl.jit.extern core_type must be 'aic', 'aiv', or 'mixed', got 'gpu'"),
        ('core_type="aiv", source="k.cpp", dual_aiv_dispatch=True', ValueError,
         "@pl.jit.extern dual_aiv_dispatch=True requires core_type='mixed'"),
        ('core_type="mixed", aic_source="k.cpp"', ValueError,
         "@pl.jit.extern(core_type='mixed') requires both aic_source= and aiv_source="),
        ('core_type="aiv", source="k.cpp", include_dirs="inc"', TypeError,
         "@pl.jit.extern include_dirs must be a sequence of paths, got str"),
        ('core_type="aiv", source="k.cpp", include_dirs=["nope"]', ValueError,
         "@pl.jit.extern include directory not found: {dir}/nope"),
        ('core_type="aiv", source="k.cpp", sorce="k.cpp"', TypeError, "@pl.jit.extern got unexpected option(s): sorce"),
    ],
)
def test_declaration_errors(tmp_path, decorator, error, message):
    path = _declare(tmp_path, decorator)
    with pytest.raises(error) as info:
        _import(path, "decl")
    assert message.format(dir=tmp_path) in str(info.value)


def test_a_stub_with_a_body_is_refused_at_its_line(tmp_path):
    from pypto.language.parser import ParserSyntaxError

    module = _import(_declare(tmp_path, 'core_type="aiv", source="k.cpp"', body="return out"), "decl")
    with pytest.raises(ParserSyntaxError) as info:
        module.entry(torch.zeros(ROWS, COLS))
    assert info.value.message == "external function 'k' has a body; its implementation is the external source"
    assert info.value.location == f"{tmp_path / 'decl.py'}:5:5"


def test_a_declared_return_needs_an_output_parameter(tmp_path):
    from pypto.language.parser import ParserTypeError

    module = _import(_declare(tmp_path, 'core_type="aiv", source="k.cpp"',
                              signature="(out: pl.Tensor[[4, 8], pl.FP32]) -> pl.Tensor[[4, 8], pl.FP32]"), "decl")
    with pytest.raises(ParserTypeError) as info:
        module.entry(torch.zeros(ROWS, COLS))
    assert info.value.message == "hand-written kernel 'k' declares a return but has no pl.Out or pl.InOut parameter to return"


def test_calling_a_stub_directly_is_refused(tmp_path):
    module = _import(_declare(tmp_path, 'core_type="aiv", source="k.cpp"'), "decl")
    with pytest.raises(TypeError, match="k is a @pl.jit.extern function: call it from a @pl.jit function"):
        module.k(torch.zeros(ROWS, COLS))


def test_a_kernel_without_kernel_entry_is_reported(tmp_path):
    path = _declare(tmp_path, 'core_type="aiv", source="k.cpp"')
    (tmp_path / "k.cpp").write_text('extern "C" void other_name(long* args) { (void)args; }\n')
    module = _import(path, "decl")
    with pytest.raises(RuntimeError, match=r"k\.cpp defines no `extern \"C\" void kernel_entry"):
        module.entry(torch.zeros(ROWS, COLS))


_MIXED = """
import pypto.language as pl


@pl.jit.extern(core_type="mixed", aic_source="aic.cpp", aiv_source="aiv.cpp", dual_aiv_dispatch={dual})
def pa(a: pl.Tensor[[8, 8], pl.FP32], out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
       flags: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...


@pl.jit
def entry(a: pl.Tensor[[8, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
          flags: pl.Out[pl.Tensor[[4], pl.FP32]]):
    with pl.spmd(4):
        out = pa(a, out, flags)
    return out
"""


@pytest.mark.parametrize("dual", [True, False])
def test_a_mixed_extern_runs_as_one_group_with_dual_dispatch_splitting_rows_by_lane(in_tmp, dual):
    (in_tmp / "aic.cpp").write_text(_AIC)
    (in_tmp / "aiv.cpp").write_text(_AIV)
    (in_tmp / "mixed.py").write_text(_MIXED.format(dual=dual))
    module = _import(in_tmp / "mixed.py", f"mixed_{dual}")
    a = torch.randn(8, 8)
    out = torch.full((8, 8), -1.0)
    flags = torch.zeros(4)
    compiled = module.entry.compile(a, out, flags)
    names = {f.name: f.function_type for f in compiled.program.functions.values()}
    assert (names["pa"], names["pa_aic"], names["pa_aiv"]) == ("Group", "AIC", "AIV")
    cpp = open(os.path.join(compiled.output_dir, "orchestration", "entry.cpp")).read()
    assert f"MixedKernels mixed_0 = {{0, 1, {1 if dual else 'INVALID_KERNEL_ID'}}};" in cpp, cpp
    compiled(a, out, flags)
    expected = torch.full((8, 8), -1.0)
    for row in range(8):
        if dual or row % 2 == 0:
            expected[row] = a[row] * 2 + row % 2
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    torch.testing.assert_close(flags, torch.tensor([100.0, 101.0, 102.0, 103.0]), rtol=0, atol=0)


def test_naming_the_result_after_another_output_warns(in_tmp):
    (in_tmp / "aic.cpp").write_text(_AIC)
    (in_tmp / "aiv.cpp").write_text(_AIV)
    source = _MIXED.format(dual=True).replace("out = pa(a, out, flags)\n    return out", "flags = pa(a, out, flags)\n    return out")
    (in_tmp / "misbound.py").write_text(source)
    module = _import(in_tmp / "misbound.py", "misbound")
    with pytest.warns(UserWarning) as record:
        module.entry(torch.randn(8, 8), torch.zeros(8, 8), torch.zeros(4))
    messages = [str(w.message) for w in record if "hand-written kernel returns" in str(w.message)]
    assert messages == [
        f"{in_tmp / 'misbound.py'}:14:9: `flags = pa(...)`: a hand-written kernel returns its first pl.Out/pl.InOut "
        "parameter, so the result of 'pa' is its parameter 'out' (the argument 'out'), not 'flags'; put the intended "
        "output first in the declaration, or assign the result to 'out'"
    ]


# The seed's paged-attention trap: `query: pl.InOut` before `out: pl.Out`, and the result bound to a
# name of its own, which is then `query`.
_INOUT_BEFORE_OUT = """
import pypto.language as pl


@pl.jit.extern(core_type="mixed", aic_source="aic.cpp", aiv_source="aiv.cpp")
def pa(query: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
       out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...


@pl.jit
def decode(query: pl.InOut[pl.Tensor[[8, 8], pl.FP32]], out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    attn_out = pa(query, out)
    return attn_out
"""


def test_an_inout_before_an_out_warns_at_the_stub_and_at_the_call(in_tmp):
    (in_tmp / "aic.cpp").write_text(_AIC)
    (in_tmp / "aiv.cpp").write_text(_AIV)
    (in_tmp / "decode.py").write_text(_INOUT_BEFORE_OUT)
    module = _import(in_tmp / "decode.py", "decode")
    with pytest.warns(UserWarning) as record:
        module.decode.compile(torch.zeros(8, 8), torch.zeros(8, 8))
    assert [str(w.message) for w in record if "hand-written kernel" in str(w.message)] == [
        f"{in_tmp / 'decode.py'}:12:5: `attn_out = pa(...)` binds 'attn_out' to 'query' (pl.InOut parameter 'query'), "
        "not to 'out' (pl.Out parameter 'out'): a hand-written kernel returns its first pl.Out/pl.InOut parameter; "
        "declare 'out' before 'query' in 'pa' so that the result is 'out'",
        f"{in_tmp / 'decode.py'}:6:1: hand-written kernel 'pa' returns its first pl.Out/pl.InOut parameter: the "
        "pl.InOut parameter 'query', not the pl.Out parameter 'out' after it, so `x = pa(...)` binds 'query'; "
        "declare 'out' before 'query' so that the result is 'out'",
    ]


def test_a_device_build_writes_each_externs_ccec_command(in_tmp):
    import shlex

    from pypto.runtime import RunConfig

    (in_tmp / "src").mkdir()
    root = _tree(in_tmp / "src")
    module = _import(root / "stub.py")
    compiled = module.entry.compile(torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS), config=RunConfig(platform="a2a3"))
    script = os.path.join(compiled.output_dir, "kernels", "aiv", "scaled_rows.ccec.sh")
    assert os.access(script, os.X_OK)
    lines = open(script).read().splitlines()
    assert lines[:2] == ["#!/bin/sh", "# Compiles hand-written kernel 'scaled_rows' for a2a3 (aiv)."]
    words = shlex.split(lines[2])
    assert words[:2] == ["exec", "ccec"] or words[1].endswith("/bin/ccec")
    assert "--cce-aicore-arch=dav-c220-vec" in words
    assert words[-4:] == [f"-I{root / 'tiling'}", "-o", os.path.join(compiled.output_dir, "kernels", "aiv", "scaled_rows.o"),
                          str(root / "aic" / "entry.cpp")]


def test_a_call_that_disagrees_with_the_declaration_is_a_type_error_at_the_call(in_tmp):
    from pypto.language.parser import ParserTypeError

    (in_tmp / "src").mkdir()
    root = _tree(in_tmp / "src")
    (root / "stub.py").write_text(_MODULE.format(core="aiv").replace(
        "def entry(x: pl.Tensor[[4, 8], pl.FP32]", "def entry(x: pl.Tensor[[8, 8], pl.FP32]"))
    module = _import(root / "stub.py", "disagree")
    with pytest.raises(ParserTypeError) as info:
        module.entry(torch.zeros(8, 8), torch.zeros(ROWS, COLS))
    assert info.value.message == (
        "parameter 'x' is annotated pl.Tensor[[4, 8], pl.FP32] but was passed a tensor of shape [8, 8] and dtype FP32"
    )
    assert info.value.location == f"{root / 'stub.py'}:6:48"  # the declaration's annotation
