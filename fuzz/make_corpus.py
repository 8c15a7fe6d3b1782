"""Writes the seed corpora (fuzz/corpus/<target>/) from the programs the tests already hold, so the
fuzzers start from inputs the readers accept:

  dsl_frontend     each `@pl.jit` entry in tests/python and examples, with a specialisation line
                   (a [128, 128] FP32 tensor per parameter, or the shape its annotation gives)
  printed_program  each `@pl.program` class there
  build_dir        the lowered_program.py of build directories under build_output/
  json_reader      the JSON form of the printed programs (pypto-opt --no-passes --emit json)

Each target keeps its smallest distinct inputs. Run by hand when the tests gain new forms:

    .venv/bin/python fuzz/make_corpus.py build/apps/pypto-opt/pypto-opt
"""

import ast
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
PER_TARGET = 40
MAX_BYTES = 6000


def dotted(node) -> str:
    if isinstance(node, ast.Call):
        return dotted(node.func)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def spec_of(annotation):
    """The specialisation an annotation names (`pl.Tensor[[64, 32], pl.FP16]`), else the default."""
    spec = {"shape": [128, 128], "dtype": "FP32"}
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple):
        shape, *rest = annotation.slice.elts
        if isinstance(shape, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in shape.elts):
            spec["shape"] = [e.value for e in shape.elts]
        if rest and isinstance(rest[0], ast.Attribute):
            spec["dtype"] = rest[0].attr
    return spec


def sources():
    files = sorted((ROOT / "tests" / "python").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    for path in files:
        text = path.read_text()
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            decorators = [dotted(d) for d in node.decorator_list]
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            # From the first decorator to the end of the body, as inspect.getsource gives it.
            lines = text.splitlines()[start - 1 : node.end_lineno]
            source = textwrap.dedent("\n".join(lines)) + "\n"
            if isinstance(node, ast.ClassDef) and "pl.program" in decorators:
                yield "printed_program", source.encode()
            elif isinstance(node, ast.FunctionDef) and "pl.jit" in decorators:
                specs = {arg.arg: spec_of(arg.annotation) for arg in node.args.args}
                yield "dsl_frontend", (json.dumps(specs) + "\n" + source).encode()


def smallest(inputs, count):
    picked = sorted({data for data in inputs if len(data) <= MAX_BYTES}, key=lambda d: (len(d), d))
    return picked[:count]


def store(target: str, inputs) -> None:
    out = ROOT / "fuzz" / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for data in inputs:
        (out / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def to_json(pypto_opt: str, programs) -> list:
    result = []
    with tempfile.TemporaryDirectory() as tmp:
        source, target = pathlib.Path(tmp) / "in.py", pathlib.Path(tmp) / "out.json"
        for program in programs:
            source.write_bytes(program)
            run = subprocess.run([pypto_opt, str(source), "--no-passes", "--emit", "json", "-o", str(target)],
                                 capture_output=True)
            if run.returncode == 0:
                result.append(target.read_bytes())
    return result


def main() -> None:
    found = {"dsl_frontend": [], "printed_program": []}
    for target, data in sources():
        found[target].append(data)
    lowered = [p.read_bytes() for p in (ROOT / "build_output").glob("*/lowered_program.py")]
    for target, inputs in found.items():
        store(target, smallest(inputs, PER_TARGET))
    store("build_dir", smallest(lowered, PER_TARGET))
    printed = smallest(found["printed_program"], 3 * PER_TARGET) + smallest(lowered, PER_TARGET)
    json_inputs = to_json(sys.argv[1], printed)
    picked = sorted(set(json_inputs), key=len)[:PER_TARGET]
    store("json_reader", picked)


if __name__ == "__main__":
    main()
