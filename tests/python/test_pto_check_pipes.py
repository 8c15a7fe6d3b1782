"""tools/pto-check on the module of a mixed kernel: both members' pipe setup and their pushes, pops and
frees conform to PTOAS's definitions, and mutated ones are rejected with the line and the op."""

import subprocess
import sys

import pytest

from conftest import REPO
from test_cross_core_pipes import CubeToVector  # the mixed kernel those tests run

TOOL = REPO / "tools" / "pto-check" / "pto_check.py"


def run_tool(*paths):
    return subprocess.run([sys.executable, str(TOOL), *map(str, paths)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    """The generic form of the group's module as the vector member's file holds it: (path, its lines)."""
    from pypto.ir import compile

    build = tmp_path_factory.mktemp("pipes") / "build"
    compile(CubeToVector, output_dir=str(build))
    path = build / "kernels" / "aiv" / "vec.generic.mlir"
    return path, path.read_text().splitlines()


def mutate(tmp_path, lines, needle, old, new):
    """A copy of the module with `old` replaced by `new` on the first line holding `needle`: (path, line)."""
    number = next(i for i, line in enumerate(lines, 1) if needle in line)
    changed = list(lines)
    changed[number - 1] = changed[number - 1].replace(old, new, 1)
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(changed) + "\n")
    return path, number


def test_both_members_pipe_ops_conform(module):
    path, lines = module
    text = "\n".join(lines)
    for op in ("pto.reserve_buffer", "pto.import_reserved_buffer", "pto.aic_initialize_pipe",
               "pto.aiv_initialize_pipe", "pto.tpush_to_aiv", "pto.tpop_from_aic", "pto.tfree_from_aic"):
        assert f'"{op}"(' in text, op
    done = run_tool(path, path.with_name("vec.pto"))
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


def test_a_split_of_the_wrong_width_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.tpush_to_aiv"', "split = 0 : i8", "split = 0 : i32")
    assert run_tool(path).stdout == (f"{path}:{number}: op 'pto.tpush_to_aiv': attribute 'split' must be an i8 "
                                     f"integer ('N : i8') (I8Attr), got 0 : i32\n")


def test_a_reserve_buffer_without_its_auto_flag_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.reserve_buffer"', "autoAlloc = false, ", "")
    assert run_tool(path).stdout == (f"{path}:{number}: op 'pto.reserve_buffer': missing required attribute "
                                     f"'autoAlloc' (a boolean ('true' or 'false'))\n")


def test_a_push_without_its_tile_is_rejected(module, tmp_path):
    path, number = mutate(tmp_path, module[1], '"pto.tpush_to_aiv"', '"pto.tpush_to_aiv"(%c)', '"pto.tpush_to_aiv"()')
    assert run_tool(path).stdout == f"{path}:{number}: op 'pto.tpush_to_aiv': expected 1 operand (tile), got 0\n"
