"""Ops whose .pto follows upstream pypto's PTO emitter where it writes a form of a later PTOAS, and
tlrelu, whose slope follows PTOAS itself.

- `high_precision=True` of pl.div / pl.log: `{precisionType = #pto<div_precision high_precision>}`
  after outs(...); PTOAS a56b18c32af3 (pto-check's table) defines no precision attribute, so the
  table's upstream_emitter source has it as a form of pto.tdiv / tlog / trecip.
- pl.tile.row_expand_add(..., tmp=t): pto.trowexpandadd with the scratch tile as a third ins()
  operand (pto-isa's A2/A3 overload), likewise a form of the upstream_emitter source.
- pl.tile.lrelu of a half-precision tile: PTOAS types the slope F32 (`F32:$slope`), so the slope is
  an f32 whatever the tile's type.

Each module conforms to the table outright (no known divergence left out), and mutated ones are
rejected with the op and its line.
"""

import re
import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def half_ops(x: pl.Tensor[[16, 64], pl.FP16], d: pl.Tensor[[16, 64], pl.FP16],
             leaky: pl.Out[pl.Tensor[[16, 64], pl.FP16]], logs: pl.Out[pl.Tensor[[16, 64], pl.FP16]],
             quot: pl.Out[pl.Tensor[[16, 64], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.load(d, [0, 0], [16, 64])
        leaky[:, :] = pl.tile.lrelu(t, 0.1)
        logs[:, :] = pl.tile.log(pl.abs(t), high_precision=True)
        quot[:, :] = pl.tile.div(t, u, high_precision=True)
    return leaky, logs, quot


@pl.jit
def row_add_with_tmp(a: pl.Tensor[[16, 48], pl.FP32], blocks: pl.Tensor[[16, 8], pl.FP32],
                     y: pl.Out[pl.Tensor[[16, 48], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tmp = pl.tile.create([16, 48], dtype=pl.FP32)
        y[:, :] = pl.tile.row_expand_add(pl.load(a, [0, 0], [16, 48]), pl.load(blocks, [0, 0], [16, 8]), tmp=tmp)
    return y
'''

kernels = kernels_fixture("upstream_forms.py", KERNELS)


def compile_strictly(kernel, *args):
    """Compiles for a2a3sim, failing on any warning (a kernel without a .pto is one): the .pto text and
    its generic form's path; every module conforms to the PTO dialect outright."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernel.compile(*args, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    report = pto_check.check_paths([Path(compiled.output_dir)])
    assert not report.problems, "\n".join(map(str, report.problems))
    return pto.read_text(), pto.with_name(pto.stem + ".generic.mlir")


def body_op(pto, name):
    """The .pto's one line of the named op, without its loc() and with its tile types shortened to
    their dtype and shape."""
    (line,) = [line for line in pto.splitlines() if f"pto.{name} " in line]
    line = re.sub(r" loc\(.*\)$", "", line).strip()
    return re.sub(r"!pto\.tile_buf<loc=vec, dtype=(\w+), rows=(\d+), cols=(\d+), [^>]*>", r"\1[\2x\3]", line)


def mutated(generic, tmp_path, op, old, new):
    """A copy of the generic module with `old` replaced by `new` on the line of `op`: (path, line)."""
    lines = generic.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith(f'"pto.{op}"'))
    assert old in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    return path, number


def problems(path):
    return [str(p) for p in pto_check.check_paths([path]).problems]


def half_inputs():
    return [torch.zeros(16, 64, dtype=torch.float16) for _ in range(5)]


def test_half_precision_ops_write_upstreams_forms_and_an_f32_slope(kernels):
    pto, _ = compile_strictly(kernels.half_ops, *half_inputs())
    assert re.fullmatch(r"pto\.tlrelu ins\(%t, %cst : f16\[16x64\], f32\) outs\(%\w+ : f16\[16x64\]\)",
                        body_op(pto, "tlrelu"))
    assert re.search(r"%cst = arith\.constant 1\.00000000000000006e-01 : f32", pto)
    assert re.fullmatch(r"pto\.tdiv ins\(%t, %u : f16\[16x64\], f16\[16x64\]\) outs\(%\w+ : f16\[16x64\]\) "
                        r"\{precisionType = #pto<div_precision high_precision>\}", body_op(pto, "tdiv"))
    assert re.fullmatch(r"pto\.tlog ins\(%\w+ : f16\[16x64\]\) outs\(%\w+ : f16\[16x64\]\) "
                        r"\{precisionType = #pto<log_precision high_precision>\}", body_op(pto, "tlog"))


def test_half_precision_ops_still_match_torch(kernels):
    torch.manual_seed(3)
    x = torch.randn(16, 64).to(torch.float16)
    d = (torch.rand(16, 64) + 0.5).to(torch.float16)
    leaky, logs, quot = (torch.empty(16, 64, dtype=torch.float16) for _ in range(3))
    kernels.half_ops(x, d, leaky, logs, quot)
    torch.testing.assert_close(leaky, torch.nn.functional.leaky_relu(x.float(), 0.1).half(), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(logs, x.float().abs().log().half(), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(quot, (x.float() / d.float()).half(), rtol=1e-3, atol=1e-3)


def test_row_expand_add_with_tmp_is_upstreams_four_operand_form(kernels):
    pto, _ = compile_strictly(kernels.row_add_with_tmp, torch.zeros(16, 48), torch.zeros(16, 8), torch.zeros(16, 48))
    assert re.fullmatch(r"pto\.trowexpandadd ins\(%\w+, %\w+, %tmp : f32\[16x48\], f32\[16x8\], f32\[16x48\]\) "
                        r"outs\(%\w+ : f32\[16x48\]\)", body_op(pto, "trowexpandadd"))


def test_the_checker_takes_the_forms_from_upstreams_emitter():
    table = pto_check.load_table()
    for op, kind in (("pto.tdiv", "PTO_DivPrecisionAttr"), ("pto.tlog", "PTO_LogPrecisionAttr"),
                     ("pto.trecip", "PTO_RecipPrecisionAttr")):
        (form,) = table["ops"][op]["alternatives"]
        assert form["source"] == "upstream pypto e2d0f78ae's PTO emitter"
        assert [(a["name"], a["kind"], a["presence"]) for a in form["attributes"]] == [
            ("precisionType", kind, "required")]
        assert table["attributes"][kind]["cases"] == ["high_precision"]
        assert table["ops"][op]["attributes"] == []  # PTOAS's own form has none
    (tmp,) = table["ops"]["pto.trowexpandadd"]["alternatives"]
    assert [o["name"] for o in tmp["operands"]] == ["src0", "src1", "tmp", "dst"]
    assert [o["name"] for o in table["ops"]["pto.trowexpandadd"]["operands"]] == ["src0", "src1", "dst"]
    assert [o["type"] for o in table["ops"]["pto.tlrelu"]["operands"]] == ["PTODpsType", "F32", "PTODpsType"]


def test_the_checker_rejects_a_precision_case_upstream_does_not_write(kernels, tmp_path):
    _, generic = compile_strictly(kernels.half_ops, *half_inputs())
    path, number = mutated(generic, tmp_path, "tdiv", "div_precision high_precision", "div_precision low_precision")
    # Neither form takes it: PTOAS's (no attribute) is named, and the case the spelling lacks.
    assert problems(path) == [
        f"{path}:{number}: op 'pto.tdiv': unknown attribute 'precisionType' (PTOAS's pto.tdiv takes no attributes)",
        f"{path}:{number}: attribute '#pto<div_precision low_precision>': 'low_precision' is not one of high_precision"]


def test_the_checker_rejects_a_precision_attribute_of_another_op(kernels, tmp_path):
    _, generic = compile_strictly(kernels.half_ops, *half_inputs())
    path, number = mutated(generic, tmp_path, "tdiv", "#pto<div_precision", "#pto<log_precision")
    (problem,) = problems(path)
    assert problem.startswith(f"{path}:{number}: op 'pto.tdiv': ")
    assert "precisionType" in problem


def test_the_checker_rejects_an_f16_slope(kernels, tmp_path):
    _, generic = compile_strictly(kernels.half_ops, *half_inputs())
    path, number = mutated(generic, tmp_path, "tlrelu", "f32, !pto.tile_buf", "f16, !pto.tile_buf")
    assert problems(path) == [f"{path}:{number}: op 'pto.tlrelu': operand #1 ('slope') must be F32, got f16"]
    # Not a known divergence any more: the tests' check would report it.
    assert not pto_check.known_divergence(pto_check.check_paths([path]).problems[0])


def test_the_checker_rejects_a_row_expand_add_of_five_operands(kernels, tmp_path):
    _, generic = compile_strictly(kernels.row_add_with_tmp, torch.zeros(16, 48), torch.zeros(16, 8),
                                  torch.zeros(16, 48))
    path, number = mutated(generic, tmp_path, "trowexpandadd", '"pto.trowexpandadd"(%', '"pto.trowexpandadd"(%tmp, %')
    # Both forms are as far from it; the checker names PTOAS's own.
    assert problems(path) == [f"{path}:{number}: op 'pto.trowexpandadd': expected 3 operands (src0, src1, dst), got 5"]
