"""pypto-opt reads and writes programs as JSON: every stage of a few programs, from the frontend's
output to the lowered program (memrefs, AIC/AIV kernels, argument directions), survives a round
trip through JSON with the same printed text."""

import json
import subprocess

import pytest
import torch

import golden_programs
from conftest import pypto_opt_path

JUMPS = """
@pl.jit
def jumps(x: pl.Tensor[[128, 32], pl.FP32], limit: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([32, 32], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            if i == 1:
                continue
            if i >= limit:
                break
            acc = pl.add(acc, x[i * 32 : i * 32 + 32, :])
        y[:, :] = acc
    return y
"""


def _opt(*args):
    return subprocess.run([pypto_opt_path(), *map(str, args)], capture_output=True, text=True, timeout=120)


def _dumps(function, args, out):
    """Every stage of lowering `function` for `args`: passes_dump/*.py, frontend first."""
    from pypto.runtime import RunConfig

    function.lower(*args, config=RunConfig(dump_passes=True, save_kernels_dir=str(out)))
    stages = sorted((out / "passes_dump").glob("*.py"))
    assert len(stages) > 5
    return stages


def _programs(write_dsl, tmp_path):
    jumps, _ = write_dsl("jumps", JUMPS)
    f16, f32 = torch.float16, torch.float32
    return {
        "elementwise": (golden_programs.elementwise, (torch.ones(16, 32), torch.ones(16, 32), torch.empty(16, 32))),
        "mixed": (golden_programs.mixed, (torch.ones(32, 64, dtype=f16), torch.ones(64, 16, dtype=f16),
                                          torch.ones(32, 16, dtype=f32), torch.empty(32, 16, dtype=f32))),
        "spmd": (golden_programs.spmd, (torch.ones(64, 32), torch.empty(64, 32))),
        "jumps": (jumps.jumps, (torch.ones(128, 32), 3, torch.empty(32, 32))),
    }


@pytest.mark.parametrize("name", ["elementwise", "mixed", "spmd", "jumps"])
def test_every_stage_round_trips_through_json(write_dsl, tmp_path, name):
    function, args = _programs(write_dsl, tmp_path)[name]
    for stage in _dumps(function, args, tmp_path / name):
        printed = _opt(stage, "--no-passes")
        assert printed.returncode == 0, printed.stderr
        as_json = _opt(stage, "--no-passes", "--emit", "json", "-o", stage.with_suffix(".json"))
        assert as_json.returncode == 0, as_json.stderr
        back = _opt(stage.with_suffix(".json"), "--no-passes")
        assert back.returncode == 0, back.stderr
        assert back.stdout == printed.stdout, stage.name
        # JSON to JSON gives the same document: nothing is lost or renumbered.
        again = _opt(stage.with_suffix(".json"), "--no-passes", "--emit", "json")
        assert again.stdout == stage.with_suffix(".json").read_text(), stage.name


def test_the_lowered_program_keeps_memrefs_kernels_and_directions(write_dsl, tmp_path):
    function, args = _programs(write_dsl, tmp_path)["mixed"]
    lowered = _dumps(function, args, tmp_path / "mixed")[-1]
    result = _opt(lowered, "--no-passes", "--emit", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert {"AIC", "AIV", "Orchestration"} <= {f["type"] for f in document["functions"]}
    assert '"memref"' in result.stdout and '"arg_directions"' in result.stdout


def test_passes_run_on_json_input_as_on_text(write_dsl, tmp_path):
    function, args = _programs(write_dsl, tmp_path)["elementwise"]
    frontend = _dumps(function, args, tmp_path / "elementwise")[0]
    assert _opt(frontend, "--no-passes", "--emit", "json", "-o", tmp_path / "in.json").returncode == 0
    from_json = _opt(tmp_path / "in.json")
    assert from_json.returncode == 0, from_json.stderr
    assert from_json.stdout == _opt(frontend).stdout
    # Forced formats: a .json file read as text is refused by the DSL parser, and the reverse.
    assert _opt(tmp_path / "in.json", "--input-format", "text", "--no-passes").returncode == 1
    as_json = _opt(frontend, "--input-format", "json", "--no-passes")
    assert as_json.returncode == 1
    assert as_json.stderr.startswith("pypto-opt: invalid JSON: parse error at line 1, column 1")


def test_malformed_json_names_the_path_of_the_fault(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "pypto-ir", "version": 1, "name": "p", "entry": "main",
                               "functions": [{"name": "main", "type": "Orchestration", "params": [],
                                              "param_directions": [], "return_types": [], "attrs": {},
                                              "body": {"kind": "SeqStmts", "stmts": [{"kind": "ForStmt"}]}}]}))
    result = _opt(bad, "--no-passes")
    assert (result.returncode, result.stderr) == (
        1, "pypto-opt: invalid PyPTO IR JSON: missing field 'for_kind' in a ForStmt at /functions/0/body/stmts/0\n")


def test_no_passes_excludes_passes(tmp_path):
    result = _opt(tmp_path / "x.py", "--no-passes", "--passes", "UnrollLoops")
    assert result.returncode != 0
    assert "excludes" in result.stderr


SSA_PROGRAM = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 16])
            u = pl.exp(t)
            pl.store(u, [0, 0], y)
        return y
"""


def test_a_program_defining_a_variable_twice_is_refused_at_the_definition(tmp_path):
    # The DSL cannot say it (each assignment is a new variable); JSON can, by naming the id of `t`
    # where `u` is defined and read.
    source = tmp_path / "p.py"
    source.write_text(SSA_PROGRAM)
    as_json = tmp_path / "p.json"
    assert _opt(source, "--no-passes", "--emit", "json", "-o", as_json).returncode == 0
    document = json.loads(as_json.read_text())
    scope = document["functions"][0]["body"]["stmts"][0]["body"]["stmts"]
    t_id = scope[0]["var"]["id"]
    scope[1]["var"] = {"kind": "Var", "id": t_id}
    scope[2]["expr"]["args"][0] = {"kind": "Var", "id": t_id}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    result = _opt(bad)
    assert (result.returncode, result.stderr) == (
        1,
        f"pypto-opt: {source}:9:13: error: pass OutlineIncoreScopes requires SSAForm: property SSAForm does not "
        "hold in function 'main': variable 't' is defined twice\n",
    )


ADD_PROGRAM = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 16])
            u = pl.add(t, t)
            pl.store(u, [0, 0], y)
        return y
"""


def _as_json(tmp_path, program):
    source = tmp_path / "p.py"
    source.write_text(program)
    as_json = tmp_path / "p.json"
    assert _opt(source, "--no-passes", "--emit", "json", "-o", as_json).returncode == 0
    return source, json.loads(as_json.read_text())


def _scope(document):
    return document["functions"][0]["body"]["stmts"][0]["body"]["stmts"]


def _read_edited(tmp_path, document, *args):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    return _opt(bad, "--no-passes", *args)


def test_json_op_calls_get_the_checks_the_dsl_parser_makes(tmp_path):
    source, document = _as_json(tmp_path, ADD_PROGRAM)
    _scope(document)[1]["value"]["args"].pop()
    result = _read_edited(tmp_path, document)
    assert (result.returncode, result.stderr) == (
        1, f"pypto-opt: {source}:10:17: error: invalid PyPTO IR JSON: 'tile.add' takes 2 arguments (lhs, rhs), "
           "got 1, at /functions/0/body/stmts/0/body/stmts/1/value\n")


def test_a_json_load_whose_shape_contradicts_its_type_is_refused(tmp_path):
    source, document = _as_json(tmp_path, ADD_PROGRAM)
    _scope(document)[0]["value"]["args"][2]["elements"][0]["value"] = 8
    result = _read_edited(tmp_path, document)
    assert (result.returncode, result.stderr) == (
        1, f"pypto-opt: {source}:9:17: error: invalid PyPTO IR JSON: 'tile.load' is recorded as "
           "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] but its arguments make it pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec], "
           "at /functions/0/body/stmts/0/body/stmts/0/value/type\n")


def test_a_json_int8_parameter_feeding_an_fp32_load_is_refused(tmp_path):
    source, document = _as_json(tmp_path, ADD_PROGRAM)
    document["functions"][0]["params"][0]["type"]["dtype"] = "INT8"
    result = _read_edited(tmp_path, document)
    assert (result.returncode, result.stderr) == (
        1, f"pypto-opt: {source}:9:17: error: invalid PyPTO IR JSON: 'tile.load' is recorded as "
           "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] but its arguments make it pl.Tile[[16, 16], pl.INT8, pl.Mem.Vec], "
           "at /functions/0/body/stmts/0/body/stmts/0/value/type\n")


MATMUL_PROGRAM = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[256, 256], pl.FP16], b: pl.Tensor[[256, 256], pl.FP16],
             c: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [256, 256])
            tb = pl.load(b, [0, 0], [256, 256])
            tc = pl.matmul(ta, tb, out_dtype=pl.FP32)
            pl.store(tc, [0, 0], c)
        return c
"""


@pytest.mark.parametrize("verify", [[], ["--verify"]])
@pytest.mark.parametrize("index, kept, message", [
    (3, 2, "13:13: error: invalid PyPTO IR JSON: 'tile.store' takes 3 to 4 arguments (tile, offsets, output_tensor, "
           "shapes), got 2, at /functions/0/body/stmts/0/body/stmts/3/expr"),
    (2, 0, "12:18: error: invalid PyPTO IR JSON: 'tile.matmul' takes 2 arguments (lhs, rhs), got 0, "
           "at /functions/0/body/stmts/0/body/stmts/2/value"),
])
def test_a_json_call_with_too_few_arguments_is_refused_before_any_pass(tmp_path, verify, index, kept, message):
    # AutoTileMatmulL0 used to read such a call's arguments past their end and abort.
    source, document = _as_json(tmp_path, MATMUL_PROGRAM)
    call = _scope(document)[index].get("value") or _scope(document)[index]["expr"]
    del call["args"][kept:]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    result = _opt(bad, *verify)
    assert (result.returncode, result.stderr) == (1, f"pypto-opt: {source}:{message}\n")


def test_json_nested_too_deep_is_refused_at_its_path_not_a_crash(tmp_path):
    # 60,000 nested tuples where the store's offsets belong: nlohmann parses them without
    # recursing; the reader, which recurses, stops at its limit of 12,000 levels. The path shows its
    # first 20 and last 10 steps.
    _, document = _as_json(tmp_path, SSA_PROGRAM)
    _scope(document)[2]["expr"]["args"][1] = "@@"
    deep = ('{"kind": "TupleLiteral", "elements": [' * 60000 + '{"kind": "ConstInt", "value": 0, "dtype": "INDEX"}'
            + "]}" * 60000)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document).replace('"@@"', deep))
    result = _opt(bad, "--no-passes")
    assert (result.returncode, result.stderr) == (
        1, "pypto-opt: invalid PyPTO IR JSON: expressions, statements and types nest more than 12000 deep at "
           "/functions/0/body/stmts/0/body/stmts/2/expr/args/1/elements/0/elements/0/elements/0/elements/0/elements"
           "/...(23971 more).../elements/0/elements/0/elements/0/elements/0/elements/0\n")
