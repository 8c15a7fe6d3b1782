#!/usr/bin/env python3
"""Checks PTO modules against the PTO dialect's op table (pto_dialect.json, transcribed from PTOAS).

    tools/pto-check/pto_check.py FILE_OR_DIR...      # .pto, .generic.mlir, or build directories

mlir-opt --allow-unregistered-dialect checks that a module is well-formed MLIR; it knows nothing of
the pto dialect. This checker knows the dialect's interface as PTOAS defines it:

- in the generic form (`<kernel>.generic.mlir`, every pto op written as `"pto.NAME"(operands)
  {attributes} : (types) -> results`): each op's name, its operand and result counts (per operand
  group where the op sizes its groups with an operandSegmentSizes attribute) and their types'
  kinds, its required attributes, and the kind of each attribute it has; an op of two forms
  (pto.tscatter: PTOAS's index form, upstream pypto's mask form; pto.tdiv with upstream's
  precisionType) is checked against the closer;
- in the custom form (`<kernel>.pto`, the syntax ptoas reads): each op's name;
- in both: every `#pto...` attribute's mnemonic and enum case, and every `!pto.X` type's mnemonic.

A directory is searched for kernels/*/*.pto and the .generic.mlir next to each. Every problem is one
line, `FILE:LINE: op 'pto.NAME': what is wrong`, and the exit status is 1 when there is any.
"""

import argparse
import dataclasses
import difflib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().with_name("pto_dialect.json")

# The segment-size attribute of an op with AttrSizedOperandSegments: MLIR 16 (mlir-opt-16) spells
# it operand_segment_sizes, MLIR 17 and later (PTOAS builds on 19) operandSegmentSizes.
_OPERAND_SEGMENTS = ("operandSegmentSizes", "operand_segment_sizes")
_RESULT_SEGMENTS = ("resultSegmentSizes", "result_segment_sizes")


@dataclasses.dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@lru_cache(maxsize=None)
def load_table(path: Path = TABLE) -> dict:
    """The op table, with the ops of its `upstream_emitter` source (ops upstream pypto's PTO emitter
    writes that no PTOAS revision available defines: pto.comm.*, the local arrays) merged in, each marked with it,
    that source's `forms` (other forms of ops PTOAS defines, as that emitter writes them: pto.tscatter's
    mask form) as the `alternatives` of those ops, and its `attribute_cases` (the MX layouts of #pto.layout)
    added to those attributes' cases."""
    table = json.loads(Path(path).read_text())
    extra = table.get("upstream_emitter")
    if extra:
        note = f"upstream pypto {extra['source']['commit']}'s PTO emitter"
        table["ops"] = {**table["ops"], **{name: {**spec, "source": note} for name, spec in extra["ops"].items()}}
        table["attributes"] = {**table["attributes"], **extra["attributes"]}
        table["types"] = {**table["types"], **extra.get("types", {})}
        # Further cases of an enum PTOAS defines (#pto.layout's mx_a_zz / mx_b_nn).
        for kind, cases in extra.get("attribute_cases", {}).items():
            table["attributes"][kind] = {**table["attributes"][kind], "cases": table["attributes"][kind]["cases"] + cases}
        for name, forms in extra.get("forms", {}).items():
            table["ops"][name] = {**table["ops"][name], "alternatives": [{**form, "source": note} for form in forms]}
    return table


# ---------------------------------------------------------------------------------------------
# Reading MLIR text


def _skip_string(text: str, i: int) -> int:
    """The index after the string literal that starts at text[i] == '"'."""
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def matching(text: str, i: int) -> int:
    """The index after the bracket group opening at text[i]; `->` is not a bracket."""
    closers = {"(": ")", "[": "]", "{": "}", "<": ">"}
    stack = []
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = _skip_string(text, i)
            continue
        if ch == "-" and text.startswith("->", i):
            i += 2
            continue
        if ch in closers:
            stack.append(closers[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets")


def split_top_level(text: str) -> list:
    """`text` split at commas outside brackets and strings; empty pieces dropped."""
    parts, start, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = _skip_string(text, i)
            continue
        if ch in "([{<" and not text.startswith("<-", i):
            i = matching(text, i)
            continue
        if ch == ",":
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def parse_attr_dict(body: str) -> dict:
    """`name = value, flag` (the inside of `{...}`) as {name: value}; a unit attribute maps to "unit"."""
    attrs = {}
    for entry in split_top_level(body):
        name, eq, value = entry.partition("=")
        attrs[name.strip().strip('"')] = value.strip() if eq else "unit"
    return attrs


@dataclasses.dataclass
class GenericOp:
    name: str
    line: int
    results: int
    operands: int
    attrs: dict
    operand_types: list
    result_types: list


_GENERIC_OP = re.compile(r'^[ \t]*(?:(%[^=\n]*?)\s*=\s*)?"(pto\.[\w.$]+)"\(', re.M)
_CUSTOM_OP = re.compile(r"^[ \t]*(?:%[^=\n\"]*?\s*=\s*)?(pto\.[\w.$]+)\b", re.M)


def _result_count(results: str) -> int:
    count = 0
    for name in split_top_level(results or ""):
        m = re.fullmatch(r"%[\w$.#-]+(?::(\d+))?", name)
        count += int(m.group(1)) if m and m.group(1) else 1
    return count


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def parse_generic_op(text: str, m: re.Match, line: int) -> GenericOp:
    """The op whose `"pto.NAME"(` `m` matched: operands, attributes (inherent `<{...}>` and `{...}`)
    and its function type."""
    i = m.end() - 1
    end = matching(text, i)
    operands = split_top_level(text[i + 1:end - 1])
    i = _skip_space(text, end)
    attrs = {}
    if text.startswith("[", i):  # successors
        i = _skip_space(text, matching(text, i))
    if text.startswith("<{", i):  # properties
        end = matching(text, i + 1)
        attrs.update(parse_attr_dict(text[i + 2:end - 1]))
        i = _skip_space(text, end + 1)
    if text.startswith("(", i):  # regions
        i = _skip_space(text, matching(text, i))
    if text.startswith("{", i):
        end = matching(text, i)
        attrs.update(parse_attr_dict(text[i + 1:end - 1]))
        i = _skip_space(text, end)
    if not text.startswith(":", i):
        raise ValueError("expected ':' and the op's function type")
    i = _skip_space(text, i + 1)
    if not text.startswith("(", i):
        raise ValueError("expected the op's function type '(...) -> ...'")
    end = matching(text, i)
    operand_types = split_top_level(text[i + 1:end - 1])
    i = _skip_space(text, end)
    if not text.startswith("->", i):
        raise ValueError("expected '->' in the op's function type")
    i = _skip_space(text, i + 2)
    if text.startswith("(", i):
        end = matching(text, i)
        result_types = split_top_level(text[i + 1:end - 1])
    else:
        stop = re.compile(r"\s+loc\(|\n").search(text, i)
        result_types = [text[i:stop.start() if stop else len(text)].strip()]
    return GenericOp(m.group(2), line, _result_count(m.group(1)), len(operands), attrs, operand_types,
                     result_types)


# ---------------------------------------------------------------------------------------------
# Types and attributes


def type_satisfies(type_text: str, constraint: str, table: dict) -> bool:
    t = type_text.strip()
    if constraint in table["type_unions"]:
        return any(type_satisfies(t, member, table) for member in table["type_unions"][constraint])
    if constraint == "ScalarPtrOrMemRef":  # a C++ predicate upstream: a GM pointer or memref
        return type_satisfies(t, "PtrType", table) or type_satisfies(t, "AnyMemRef", table)
    if constraint in table["types"]:
        return re.match(rf"!pto\.{table['types'][constraint]}(<|$)", t) is not None
    simple = {
        "AnyType": lambda: True,
        "Index": lambda: t == "index",
        "I1": lambda: t == "i1",
        "I32": lambda: t == "i32",
        "I64": lambda: t == "i64",
        "F32": lambda: t == "f32",
        "AnyInteger": lambda: re.fullmatch(r"[su]?i\d+", t) is not None,
        "AnySignlessInteger": lambda: re.fullmatch(r"i\d+", t) is not None,
        "AnyFloat": lambda: re.fullmatch(r"f\d+|bf16|tf32|f8\w+", t) is not None,
        "AnyMemRef": lambda: t.startswith("memref<"),
        "AnyRankedTensor": lambda: t.startswith("tensor<") and not t.startswith("tensor<*"),
    }
    check = simple.get(constraint)
    return True if check is None else check()  # a constraint we cannot judge is not reported


_ATTR_KIND_FORMS = {
    "I32Attr": (r"-?\d+ : i32", "an i32 integer ('N : i32')"),
    "I64Attr": (r"-?\d+( : i64)?", "an i64 integer ('N : i64')"),
    "I8Attr": (r"-?\d+ : i8", "an i8 integer ('N : i8')"),
    "BoolAttr": (r"true|false", "a boolean ('true' or 'false')"),
    "StrAttr": (r'"(?:[^"\\]|\\.)*"', "a string"),
    "I64ArrayAttr": (r"\[\s*(-?\d+( : i64)?\s*(,\s*-?\d+( : i64)?\s*)*)?\]", "an array of i64 ('[1, 2]')"),
    "FlatSymbolRefAttr": (r"@[\w$.]+|@\"[^\"]*\"", "a symbol reference ('@name')"),
    "UnitAttr": (r"unit", "a unit attribute (no value)"),
}


def attribute_form(kind: str, table: dict) -> str:
    """How an attribute of `kind` is spelled, for messages."""
    if kind in table["attribute_unions"]:
        return " or ".join(attribute_form(k, table) for k in table["attribute_unions"][kind])
    if kind in table["attributes"]:
        a = table["attributes"][kind]
        return f"#pto<{a['mnemonic']} ...>" if a["print"] == "enum" else f"#pto.{a['mnemonic']}<...>"
    return _ATTR_KIND_FORMS.get(kind, (None, kind))[1]


def attribute_matches(value: str, kind: str, table: dict) -> bool:
    if kind in table["attribute_unions"]:
        return any(attribute_matches(value, k, table) for k in table["attribute_unions"][kind])
    if kind in table["attributes"]:
        a = table["attributes"][kind]
        pattern = rf"#pto<{a['mnemonic']}\s+(.*)>" if a["print"] == "enum" else rf"#pto\.{a['mnemonic']}<(.*)>"
        m = re.fullmatch(pattern, value, flags=re.S)
        return m is not None and ("cases" not in a or m.group(1).strip() in a["cases"])
    form = _ATTR_KIND_FORMS.get(kind)
    return True if form is None else re.fullmatch(form[0], value) is not None


def check_dialect_spellings(text: str, path: str, table: dict) -> list:
    """Every `#pto...` attribute and `!pto.X` type in the text names one the dialect defines."""
    problems = []
    by_mnemonic = {(a["print"], a["mnemonic"]): a for a in table["attributes"].values()}
    type_mnemonics = set(table["types"].values())
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        for m in re.finditer(r"#pto(?:<(\w+)\s+([^>]*)>|\.(\w+)<([^<>]*)>)", line):
            style, mnemonic, case = ("enum", m.group(1), m.group(2)) if m.group(1) else ("dotted", m.group(3), m.group(4))
            attr = by_mnemonic.get((style, mnemonic))
            if attr is None:
                other = by_mnemonic.get(("dotted" if style == "enum" else "enum", mnemonic))
                hint = ""
                if other:
                    hint = f"; PTOAS spells it {attribute_form_of(other)}"
                problems.append(Problem(path, number, f"unknown attribute '{m.group(0)}' (not in the PTO dialect{hint})"))
            elif "cases" in attr and case.strip() not in attr["cases"]:
                problems.append(Problem(path, number, f"attribute '{m.group(0)}': '{case.strip()}' is not one of "
                                                      f"{', '.join(attr['cases'])}"))
        for m in re.finditer(r"!pto\.(\w+)", line):
            if m.group(1) not in type_mnemonics:
                problems.append(Problem(path, number, f"unknown type '!pto.{m.group(1)}' (the PTO dialect's types: "
                                                      f"{', '.join(sorted(type_mnemonics))})"))
    return problems


def attribute_form_of(attr: dict) -> str:
    return f"#pto<{attr['mnemonic']} ...>" if attr["print"] == "enum" else f"#pto.{attr['mnemonic']}<...>"


# ---------------------------------------------------------------------------------------------
# Ops


def unknown_op(name: str, table: dict) -> str:
    close = difflib.get_close_matches(name, table["ops"], n=1, cutoff=0.75)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"op '{name}': not an op of the PTO dialect (PTOAS {table['source']['commit'][:12]}){hint}"


def _group_names(groups: list) -> str:
    marks = {"single": "", "optional": "?", "variadic": "*"}
    return ", ".join(g["name"] + marks[g["arity"]] for g in groups)


def _count_range(groups: list) -> tuple:
    low = sum(1 for g in groups if g["arity"] == "single")
    high = None if any(g["arity"] == "variadic" for g in groups) else low + sum(1 for g in groups if g["arity"] == "optional")
    return low, high


def _expected(low: int, high, noun: str) -> str:
    if high is None:
        return f"at least {low} {noun}s"
    if low == high:
        return f"{low} {noun}{'' if low == 1 else 's'}"
    return f"{low} to {high} {noun}s"


def _segments(attrs: dict, names: tuple):
    for name in names:
        if name in attrs:
            m = re.fullmatch(r"array<i32(?::\s*(.*))?>", attrs[name].strip())
            if m is None:
                return name, None
            return name, [int(v) for v in (m.group(1) or "").split(",") if v.strip()]
    return None, None


def assign_groups(groups: list, count: int, sizes) -> list:
    """The group of each of `count` values, or [] when it cannot be told."""
    if sizes is None:
        flexible = [g for g in groups if g["arity"] != "single"]
        if len(flexible) > 1:
            return []
        extra = count - sum(1 for g in groups if g["arity"] == "single")
        sizes = [1 if g["arity"] == "single" else extra for g in groups]
    owners = []
    for group, size in zip(groups, sizes):
        owners += [group] * size
    return owners if len(owners) == count else []


def check_values(op: GenericOp, spec: dict, kind: str, table: dict) -> list:
    """Operand or result counts, segment sizes and types: messages, without the location."""
    groups = spec[kind + "s"]
    count = op.operands if kind == "operand" else op.results
    types = op.operand_types if kind == "operand" else op.result_types
    sized = spec["sized_operand_segments" if kind == "operand" else "sized_result_segments"]
    where = f"op '{op.name}'"
    sizes = None
    if sized:
        attr, sizes = _segments(op.attrs, _OPERAND_SEGMENTS if kind == "operand" else _RESULT_SEGMENTS)
        spelled = (_OPERAND_SEGMENTS if kind == "operand" else _RESULT_SEGMENTS)[0]
        if attr is None:
            return [f"{where}: missing {spelled} (one {kind} count per group: {_group_names(groups)})"]
        if sizes is None or len(sizes) != len(groups):
            return [f"{where}: {attr} = {op.attrs[attr]} must give {len(groups)} sizes, one per {kind} group "
                    f"({_group_names(groups)})"]
        for group, size in zip(groups, sizes):
            if (group["arity"] == "single" and size != 1) or (group["arity"] == "optional" and size > 1) or size < 0:
                allowed = "1" if group["arity"] == "single" else "0 or 1"
                return [f"{where}: {kind} group '{group['name']}' has {size} {kind}s in {attr}, expected {allowed}"]
        if sum(sizes) != count:
            return [f"{where}: {attr} = {op.attrs[attr]} adds up to {sum(sizes)} {kind}s, got {count}"]
    else:
        low, high = _count_range(groups)
        if count < low or (high is not None and count > high):
            return [f"{where}: expected {_expected(low, high, kind)} ({_group_names(groups) or 'none'}), got {count}"]
    problems = []
    if len(types) == count:
        for number, (group, type_text) in enumerate(zip(assign_groups(groups, count, sizes), types)):
            if not type_satisfies(type_text, group["type"], table):
                problems.append(f"{where}: {kind} #{number} ('{group['name']}') must be {group['type']}, got {type_text}")
    return problems


def check_attributes(op: GenericOp, spec: dict, table: dict) -> list:
    where = f"op '{op.name}'"
    known = {a["name"]: a for a in spec["attributes"]}
    problems = []
    for attr in spec["attributes"]:
        if attr["presence"] == "required" and attr["name"] not in op.attrs:
            problems.append(f"{where}: missing required attribute '{attr['name']}' ({attribute_form(attr['kind'], table)})")
    for name, value in op.attrs.items():
        if name in _OPERAND_SEGMENTS + _RESULT_SEGMENTS:
            continue
        if name not in known:
            if "." in name:  # a discardable attribute of some dialect: not the op's to define
                continue
            names = ", ".join(known) or "no attributes"
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            problems.append(f"{where}: unknown attribute '{name}' (PTOAS's {op.name} takes {names}){hint}")
        elif not attribute_matches(value, known[name]["kind"], table):
            problems.append(f"{where}: attribute '{name}' must be {attribute_form(known[name]['kind'], table)} "
                            f"({known[name]['kind']}), got {value}")
    return problems


def check_op(op: GenericOp, spec: dict, table: dict) -> list:
    """The problems of `op` against the form of its op it comes closest to (the fewest problems; the
    PTOAS form on a tie): an op with `alternatives` (pto.tscatter's mask form) conforms to any one."""
    best = None
    for form in [spec] + spec.get("alternatives", []):
        messages = check_values(op, form, "operand", table) + check_values(op, form, "result", table)
        messages += check_attributes(op, form, table)
        if best is None or len(messages) < len(best):
            best = messages
    return best


def check_generic(text: str, path: str, table: dict) -> tuple:
    """(problems, pto ops checked) for a module in the generic form."""
    problems, ops = [], 0
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    import bisect

    for m in _GENERIC_OP.finditer(text):
        line = bisect.bisect_right(line_starts, m.start())
        ops += 1
        name = m.group(2)
        spec = table["ops"].get(name)
        if spec is None:
            problems.append(Problem(path, line, unknown_op(name, table)))
            continue
        try:
            op = parse_generic_op(text, m, line)
        except ValueError as error:
            problems.append(Problem(path, line, f"op '{name}': cannot read its generic form: {error}"))
            continue
        problems += [Problem(path, line, message) for message in check_op(op, spec, table)]
    # A pto op in its custom syntax: MLIR parses an unregistered dialect's ops only in the generic form.
    for number, line in enumerate(text.splitlines(), 1):
        m = _CUSTOM_OP.match(line)
        if m:
            ops += 1
            problems.append(Problem(path, number, f"op '{m.group(1)}': written in the custom syntax, not the generic "
                                                  f"form (\"{m.group(1)}\"(operands) : (types) -> results)"))
    return problems, ops


def check_custom(text: str, path: str, table: dict) -> tuple:
    """(problems, pto ops checked) for a module in the custom syntax ptoas reads: op names only."""
    problems, ops = [], 0
    for number, line in enumerate(text.splitlines(), 1):
        m = _CUSTOM_OP.match(line)
        if m:
            ops += 1
            if m.group(1) not in table["ops"]:
                problems.append(Problem(path, number, unknown_op(m.group(1), table)))
    return problems, ops


# Where this backend's modules knowingly differ from the dialect as PTOAS's table records it, with the
# reason; `known_divergence` names the one a problem is. Upstream pypto writes both the same way (for
# PTOAS releases newer than the table's). precisionType on tdiv / tlog and trowexpandadd's tmp operand,
# which upstream writes too, are forms of the table's upstream_emitter source instead: they conform.
KNOWN_DIVERGENCES = (
    (r"#pto<acc_phase |op 'pto\.tgemv(\.acc|\.bias)?': unknown attribute 'accPhase'",
     "acc_phase=: upstream pypto's accPhase attribute of tgemv, not in the table's PTOAS"),
    (r"operand #\d+ \('scalar'\) must be ScalarType, got ui\d+",
     "unsigned scalars typed as the tile's element type, as upstream pypto types them"),
)


def known_divergence(problem: Problem) -> str:
    """The reason `problem` is a known divergence of this backend's modules, or ""."""
    for pattern, reason in KNOWN_DIVERGENCES:
        if re.search(pattern, problem.message):
            return reason
    return ""


@dataclasses.dataclass
class Report:
    files: int = 0
    ops: int = 0
    problems: list = dataclasses.field(default_factory=list)


def check_file(path: Path, table: dict = None, report: Report = None, shown: str = None) -> Report:
    """Checks one module; a .pto is read as the custom syntax, anything else as the generic form.
    `shown` is the name problems carry (default: `path` as given)."""
    table = table or load_table()
    report = report or Report()
    text = Path(path).read_text()
    shown = shown or str(path)
    if str(path).endswith(".pto"):
        problems, ops = check_custom(text, shown, table)
    else:
        problems, ops = check_generic(text, shown, table)
    report.files += 1
    report.ops += ops
    report.problems += problems + check_dialect_spellings(text, shown, table)
    return report


def modules_under(directory: Path) -> list:
    """Every kernels/*/*.pto under `directory` and the .generic.mlir next to each."""
    found = []
    for pto in sorted(Path(directory).rglob("kernels/*/*.pto")):
        found.append(pto)
        generic = pto.with_name(pto.stem + ".generic.mlir")
        if generic.is_file():
            found.append(generic)
    return found


def check_paths(paths, table: dict = None, relative_to: Path = None) -> Report:
    report = Report()
    for path in paths:
        path = Path(path)
        for module in (modules_under(path) if path.is_dir() else [path]):
            shown = str(module.relative_to(relative_to)) if relative_to else None
            check_file(module, table, report, shown)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, help=".pto / .generic.mlir files, or directories to search")
    parser.add_argument("--skip-known", action="store_true",
                        help="leave out the problems KNOWN_DIVERGENCES lists (this backend's known differences)")
    parser.add_argument("--table", type=Path, default=TABLE, help="the op table (default: %(default)s)")
    args = parser.parse_args(argv)
    for path in args.paths:
        if not path.exists():
            parser.error(f"{path}: no such file or directory")
    table = load_table(args.table)
    report = check_paths(args.paths, table)
    if args.skip_known:
        report.problems = [p for p in report.problems if not known_divergence(p)]
    for problem in report.problems:
        print(problem)
    print(f"pto-check: {report.files} modules, {report.ops} pto ops, {len(report.problems)} problems "
          f"(PTO dialect of PTOAS {table['source']['commit'][:12]})", file=sys.stderr)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
