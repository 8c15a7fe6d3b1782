"""pl.tile.mgather, pl.mscatter and pl.random in a .pto. Their memory operand is the whole tensor (a
partition with offsets 0, sizes its shape); pto.mgather carries upstream pypto's `coalesce` (a form
of a PTOAS later than a56b18c32af3, which pto-check's table holds under its upstream-emitter source),
pto.mscatter and pto.trandom are PTOAS's own forms, trandom's rounds other than 10 in the generic form
only. Every module conforms to pto-check's table, and the simulator computes what torch does."""

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
def rows(mem: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[1, 16], pl.INT32],
         out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.load(idx, [0, 0], [1, 16])
        out = pl.store(pl.tile.mgather(mem, i, coalesce="row", gather_oob="clamp"), [0, 0], out)
    return out


@pl.jit
def elements_into_mat(mem: pl.Tensor[[1024], pl.FP16], idx: pl.Tensor[[32, 32], pl.INT32],
                      scratch: pl.Tensor[[1024], pl.FP16], eye: pl.Tensor[[32, 32], pl.FP16],
                      out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.tile.mgather(mem, idx, coalesce="elem", target_memory=pl.Mem.Mat, scratch=scratch)
        e = pl.load(eye, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        out = pl.store(pl.matmul(e, g), [0, 0], out)
    return out


@pl.jit
def scatter(src: pl.Tensor[[4, 32], pl.FP32], idx: pl.Tensor[[4, 32], pl.INT32],
            out: pl.Out[pl.Tensor[[128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.mscatter(pl.load(src, [0, 0], [4, 32]), pl.load(idx, [0, 0], [4, 32]), out)
    return out


@pl.jit
def philox7(out: pl.Out[pl.Tensor[[2, 256], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [2, 256], dtype=pl.INT32, rounds=7)
        out = pl.assemble(out, r, [0, 0])
    return out
'''

kernels = kernels_fixture("pto_memory_indexed.py", KERNELS)


def compile_strictly(kernel, *args, platform="a5sim"):
    """Compiles, failing on any warning (a kernel without a .pto is one): the program and its modules'
    .pto texts by path; every module conforms to the PTO dialect outright."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernel.compile(*args, config=RunConfig(platform=platform))
    report = pto_check.check_paths([Path(compiled.output_dir)])
    assert not report.problems, "\n".join(map(str, report.problems))
    return compiled, {path: path.read_text() for path in Path(compiled.output_dir).glob("kernels/*/*.pto")}


def op_lines(ptos, name):
    """The lines of pto.<name> in the modules, without their loc()."""
    return [re.sub(r" loc\(.*\)$", "", line).strip() for text in ptos.values() for line in text.splitlines()
            if f"pto.{name} " in line or f'"pto.{name}"' in line]


def vec(rows, cols, dtype):
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row=?, v_col=?, "
            "blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def test_mgather_of_rows_reads_the_whole_tensor_with_upstreams_coalesce(kernels):
    mem, out = torch.randn(64, 32).half(), torch.zeros(16, 32).half()
    idx = torch.randint(0, 80, (1, 16), dtype=torch.int32)  # some past the end: clamped to the last row
    compiled, ptos = compile_strictly(kernels.rows, mem, idx, out)
    (line,) = op_lines(ptos, "mgather")
    assert line == (f"pto.mgather ins(%mem_pview, %i : !pto.partition_tensor_view<64x32xf16>, {vec(1, 16, 'i32')}) "
                    f"outs(%__tmp_v0 : {vec(16, 32, 'f16')}) {{coalesce = #pto<coalesce row>, "
                    f"gatherOob = #pto<gather_oob clamp>}}"), line
    compiled(mem, idx, out)
    torch.testing.assert_close(out, mem[idx[0].long().clamp(max=63)], rtol=0, atol=0)


def test_mgather_of_elements_into_mat_stages_through_the_scratch_tensor(kernels):
    mem, idx = (torch.arange(1024) % 53).half(), torch.randint(0, 1024, (32, 32), dtype=torch.int32)
    eye, out = torch.eye(32).half(), torch.zeros(32, 32)
    compiled, ptos = compile_strictly(kernels.elements_into_mat, mem, idx, torch.zeros(1024).half(), eye, out)
    (line,) = op_lines(ptos, "mgather")
    assert line.startswith("pto.mgather ins(%mem_pview, %idx_pview, %scratch_pview : "
                           "!pto.partition_tensor_view<1024xf16>, !pto.partition_tensor_view<32x32xi32>, "
                           "!pto.partition_tensor_view<1024xf16>) outs("), line
    assert line.endswith("{coalesce = #pto<coalesce elem>}"), line
    compiled(mem, idx, torch.zeros(1024).half(), eye, out)
    assert torch.equal(out, mem[idx.long()].float())


def test_mscatter_writes_through_the_whole_output_tensor(kernels):
    src, idx, out = torch.randn(4, 32), torch.randperm(128).to(torch.int32).reshape(4, 32), torch.zeros(128)
    compiled, ptos = compile_strictly(kernels.scatter, src, idx, out)
    (line,) = op_lines(ptos, "mscatter")
    assert line.endswith(f"{vec(4, 32, 'i32')}) outs(%out_pview : !pto.partition_tensor_view<128xf32>)"), line
    compiled(src, idx, out)
    expected = torch.zeros(128)
    expected[idx.flatten().long()] = src.flatten()
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_trandom_of_seven_rounds_is_written_in_the_generic_form(kernels):
    out = torch.zeros(2, 256, dtype=torch.int32)
    _, ptos = compile_strictly(kernels.philox7, out)
    (line,) = op_lines(ptos, "trandom")
    assert re.fullmatch(r'"pto\.trandom"\((%\w+, ){6}%\w+\) \{rounds = 7 : i32\} : \((i32, ){6}!pto\.tile_buf<[^>]*>\) '
                        r"-> \(\)", line), line


def test_the_checker_rejects_a_coalesce_mode_pto_does_not_define(kernels, tmp_path):
    """The .pto's mgather with a coalesce mode no PTOAS form has: the attribute and its line named."""
    mem, idx, out = torch.randn(64, 32).half(), torch.zeros(1, 16, dtype=torch.int32), torch.zeros(16, 32).half()
    _, ptos = compile_strictly(kernels.rows, mem, idx, out)
    (text,) = ptos.values()
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines, 1) if "pto.mgather " in line)
    lines[number - 1] = lines[number - 1].replace("#pto<coalesce row>", "#pto<coalesce column>")
    path = tmp_path / "mutated.pto"
    path.write_text("\n".join(lines) + "\n")
    problems = [str(p) for p in pto_check.check_paths([path]).problems]
    assert problems == [f"{path}:{number}: attribute '#pto<coalesce column>': 'column' is not one of row, elem"]


def test_the_checker_takes_mgathers_coalesce_form_from_upstreams_emitter():
    table = pto_check.load_table()
    (coalesce,) = table["ops"]["pto.mgather"]["alternatives"]
    assert coalesce["source"] == "upstream pypto e2d0f78ae's PTO emitter"
    assert [(o["name"], o["arity"]) for o in coalesce["operands"]] == [
        ("mem", "single"), ("idx", "single"), ("scratch", "optional"), ("dst", "single")]
    assert table["attributes"]["PTO_CoalesceAttr"]["cases"] == ["row", "elem"]
    # PTOAS's own form is still the op's first.
    assert [o["name"] for o in table["ops"]["pto.mgather"]["operands"]] == ["mem", "idx", "dst"]
