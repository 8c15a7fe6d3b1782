"""tools/pto-check: modules checked against the PTO dialect's op table transcribed from PTOAS.

A real module passes; mutated ones (an op name, an operand count, an attribute's kind or case, a type)
are rejected with the file, the line and the op.
"""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import REPO, kernels_fixture
from pto_dialect import pto_check

TOOL = REPO / "tools" / "pto-check" / "pto_check.py"
COMMIT = json.loads((REPO / "tools" / "pto-check" / "pto_dialect.json").read_text())["source"]["commit"]

KERNELS = '''
import pypto.language as pl


@pl.jit
def add_scale(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.add(pl.load(a, [0, 0], [32, 64]), pl.load(b, [0, 0], [32, 64]))
        pl.store(pl.mul(t, 0.5), [0, 0], c)
    return c


@pl.jit
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b1 = pl.load(b, [0, 0], [32, 48], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c
'''

kernels = kernels_fixture("pto_check_kernels.py", KERNELS)


def run_tool(*paths):
    return subprocess.run([sys.executable, str(TOOL), *map(str, paths)], capture_output=True, text=True, timeout=60)


@pytest.fixture
def module(kernels):
    """The generic form of add_scale's one kernel: (path, its lines)."""
    compiled = kernels.add_scale.compile(torch.zeros(32, 64), torch.zeros(32, 64), torch.zeros(32, 64))
    (path,) = sorted(Path(compiled.output_dir).glob("kernels/*/*.generic.mlir"))
    return path, path.read_text().splitlines()


def mutate(tmp_path, lines, needle, old, new):
    """A copy of the module with `old` replaced by `new` on the first line holding `needle`: (path, line)."""
    number = next(i for i, line in enumerate(lines, 1) if needle in line)
    changed = list(lines)
    changed[number - 1] = changed[number - 1].replace(old, new, 1)
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(changed) + "\n")
    return path, number


def test_the_table_names_the_ptoas_commit_it_was_read_from():
    table = pto_check.load_table()
    assert table["source"]["repository"] == "https://github.com/hw-native-sys/PTOAS"
    assert len(COMMIT) == 40
    assert {"pto.tload", "pto.tstore", "pto.tadd", "pto.tmatmul", "pto.alloc_tile"} <= set(table["ops"])
    tadd = table["ops"]["pto.tadd"]
    assert [(o["name"], o["arity"]) for o in tadd["operands"]] == [("src0", "single"), ("src1", "single"),
                                                                    ("dst", "single")]


@pytest.mark.parametrize("name, shape", [("add_scale", [(32, 64)] * 3), ("matmul", [(64, 32), (32, 48), (64, 48)])])
def test_real_modules_conform(kernels, name, shape):
    compiled = getattr(kernels, name).compile(*[torch.zeros(*s) for s in shape])
    done = run_tool(compiled.output_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("pto-check: 2 modules, ")
    assert done.stderr.endswith(f" pto ops, 0 problems (PTO dialect of PTOAS {COMMIT[:12]})\n")


def test_a_wrong_op_name_is_rejected_with_its_line(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.tadd"', '"pto.tadd"', '"pto.tadds2"')
    done = run_tool(path)
    assert done.returncode == 1
    assert done.stdout == (f"{path}:{number}: op 'pto.tadds2': not an op of the PTO dialect (PTOAS {COMMIT[:12]}); "
                           f"did you mean 'pto.tadds'?\n")


def test_a_missing_operand_is_rejected_with_its_line(module, tmp_path):
    line = next(line for line in module[1] if '"pto.tadd"(' in line)
    first = line.split('"pto.tadd"(', 1)[1].split(", ", 1)[0]
    path, number = mutate(tmp_path, module[1], '"pto.tadd"', f'"pto.tadd"({first}, ', '"pto.tadd"(')
    # The operand's type stays in the function type: the count is the op's operand list.
    done = run_tool(path)
    assert done.stdout == f"{path}:{number}: op 'pto.tadd': expected 3 operands (src0, src1, dst), got 2\n"


def test_a_segment_size_that_does_not_fit_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.partition_view"', "array<i32: 1, 2, 2>", "array<i32: 1, 2>")
    done = run_tool(path)
    assert done.stdout == (f"{path}:{number}: op 'pto.partition_view': operand_segment_sizes = array<i32: 1, 2> must "
                           f"give 3 sizes, one per operand group (source, offsets*, sizes*)\n")


def test_an_attribute_of_the_wrong_kind_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.make_tensor_view"', "layout = #pto.layout<nd>", "layout = 0 : i32")
    done = run_tool(path)
    assert done.stdout == (f"{path}:{number}: op 'pto.make_tensor_view': attribute 'layout' must be #pto.layout<...> "
                           f"(PTO_LayoutAttr), got 0 : i32\n")


def test_an_enum_case_the_dialect_lacks_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.make_tensor_view"', "#pto.layout<nd>", "#pto.layout<row>")
    done = run_tool(path)
    # PTOAS's three cases, then the MX layouts of the table's upstream_emitter source.
    assert f"{path}:{number}: attribute '#pto.layout<row>': 'row' is not one of nd, dn, nz, mx_a_zz, mx_b_nn\n" \
        in done.stdout
    assert f"{path}:{number}: op 'pto.make_tensor_view': attribute 'layout' must be #pto.layout<...>" in done.stdout


def test_an_operand_of_the_wrong_type_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.alloc_tile"', "(i64, index, index)", "(i32, index, index)")
    done = run_tool(path)
    assert done.stdout == f"{path}:{number}: op 'pto.alloc_tile': operand #0 ('addr') must be I64, got i32\n"


def test_the_custom_form_is_checked_for_op_names(module, tmp_path):
    path, lines = module
    pto = path.with_name(path.name.removesuffix(".generic.mlir") + ".pto")
    text = pto.read_text().splitlines()
    number = next(i for i, line in enumerate(text, 1) if "pto.tadd ins(" in line)
    text[number - 1] = text[number - 1].replace("pto.tadd ins(", "pto.t_add ins(")
    broken = tmp_path / "broken.pto"
    broken.write_text("\n".join(text) + "\n")
    done = run_tool(broken)
    assert done.stdout == (f"{broken}:{number}: op 'pto.t_add': not an op of the PTO dialect (PTOAS {COMMIT[:12]}); "
                           f"did you mean 'pto.tadd'?\n")


def test_the_conformance_tool_counts_kernels_and_modules(kernels, build_dir):
    # Compiled afresh into this test's build directory, not taken from the in-memory cache.
    kernels.add_scale.clear_cache()
    kernels.matmul.clear_cache()
    kernels.add_scale.compile(torch.zeros(32, 64), torch.zeros(32, 64), torch.zeros(32, 64))
    kernels.matmul.compile(torch.zeros(64, 32), torch.zeros(32, 48), torch.zeros(64, 48))
    spec = importlib.util.spec_from_file_location("conformance_run", REPO / "tools" / "conformance" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    assert run.count_kernels(build_dir) == 2
    assert run.check_ptos(build_dir) == (2, 2, "", "")
