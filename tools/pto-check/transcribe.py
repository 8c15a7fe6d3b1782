#!/usr/bin/env python3
"""Writes pto_dialect.json, the table of the PTO dialect's ops that pto_check.py checks modules
against, from a PTOAS checkout (github.com/hw-native-sys/PTOAS):

    tools/pto-check/transcribe.py PTOAS_CHECKOUT [-o tools/pto-check/pto_dialect.json]

PTOAS_CHECKOUT is a work tree or a bare git directory (read at HEAD). What is taken are facts about
the dialect's interface, not its text: each op's name, its operands and results in order (name,
single/optional/variadic, type constraint), its attributes (name, kind, required or not), whether
its operand groups are sized by an attribute, its region count; each attribute's mnemonic, how it
prints and its enum cases; each type's mnemonic. The table records the commit it was read from.

The reader understands the subset of TableGen the dialect's files use: `def NAME : CLASS<...> {
let arguments = (ins ...); let results = (outs ...); ... }`. A construct it does not know stops
it with the file and the definition, rather than leaving a silent gap in the table.
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

_OPS_TD = "include/PTO/IR/PTOOps.td"
_ATTRS_TD = "include/PTO/IR/PTOAttrs.td"
_TYPES_TD = "include/PTO/IR/PTOTypeDefs.td"

# The op classes of PTOOps.td and what each implies beyond its arguments.
_OP_CLASSES = {"PTO_Op": 0, "PTO_TOp": 0, "PTO_DpsOp": 0, "PTO_SectionOp": 1}  # class -> regions


def read_source(checkout: Path, path: str) -> str:
    if (checkout / path).is_file():
        return (checkout / path).read_text()
    return subprocess.run(["git", "-C", str(checkout), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def head_commit(checkout: Path) -> str:
    return subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def strip_comments(text: str) -> str:
    # `[{ ... }]` code blocks hold C++ whose `//` and braces must not confuse the reader: blank them.
    text = re.sub(r"\[\{.*?\}\]", lambda m: '""', text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def split_top_level(text: str, sep: str = ",") -> list:
    """Splits at `sep` outside <>, (), [] and quotes."""
    parts, depth, quoted, current = [], 0, False, []
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<([":
            depth += 1
        elif not quoted and ch in ">)]":
            depth -= 1
        if ch == sep and depth == 0 and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def definitions(text: str):
    """(name, header after the colon, body or "") for every top-level `def`."""
    pos = 0
    pattern = re.compile(r"^def\s+(\w+)\s*:", re.M)
    while (m := pattern.search(text, pos)):
        i, depth = m.end(), 0
        while i < len(text):
            ch = text[i]
            if ch in "<([":
                depth += 1
            elif ch in ">)]":
                depth -= 1
            elif depth == 0 and ch in "{;":
                break
            i += 1
        header = text[m.end():i].strip()
        body = ""
        if i < len(text) and text[i] == "{":
            j, depth = i, 0
            while j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            body = text[i + 1:j]
            i = j
        yield m.group(1), header, body
        pos = i + 1


def let_list(body: str, field: str, keyword: str):
    """The entries of `let FIELD = (KEYWORD ...);`, or None when the body does not set it."""
    m = re.search(rf"let\s+{field}\s*=\s*\(\s*{keyword}\b", body)
    if not m:
        return None
    i, depth = m.end(), 1
    while depth:
        depth += {"(": 1, ")": -1}.get(body[i], 0)
        i += 1
    return split_top_level(body[m.end():i - 1])


def unwrap(constraint: str) -> str:
    """`Arg<T, "doc", [effects]>` and `Res<...>` describe T."""
    m = re.fullmatch(r"(?:Arg|Res)<(.*)>", constraint.strip(), flags=re.S)
    return split_top_level(m.group(1))[0] if m else constraint.strip()


def is_attribute(constraint: str) -> bool:
    return bool(re.search(r"Attr\b|Attr<|AttrOf<", constraint))


def attribute_entry(name: str, constraint: str) -> dict:
    presence = "required"
    m = re.fullmatch(r"(OptionalAttr|DefaultValuedAttr|DefaultValuedOptionalAttr)<(.*)>", constraint, flags=re.S)
    if m:
        presence = "optional" if m.group(1) == "OptionalAttr" else "defaulted"
        constraint = split_top_level(m.group(2))[0]
    if constraint == "UnitAttr":
        presence = "optional"
    return {"name": name, "kind": constraint, "presence": presence}


def value_entry(name: str, constraint: str) -> dict:
    m = re.fullmatch(r"(Optional|Variadic)<(.*)>", constraint, flags=re.S)
    if m:
        return {"name": name, "arity": m.group(1).lower(), "type": m.group(2).strip()}
    return {"name": name, "arity": "single", "type": constraint}


def transcribe_ops(text: str, where: str) -> tuple:
    ops, unions = {}, {}
    for name, header, body in definitions(text):
        union = re.fullmatch(r"AnyTypeOf<\s*\[(.*?)\]\s*(?:,.*)?>", header, flags=re.S)
        if union:
            unions[name] = [t.strip() for t in union.group(1).split(",")]
            continue
        m = re.fullmatch(r"(\w+)<\s*\"([\w.]+)\"\s*(?:,(.*))?>", header, flags=re.S)
        if not m or m.group(1) not in _OP_CLASSES:
            continue
        traits = m.group(3) or ""
        op = {"operands": [], "results": [], "attributes": [], "regions": _OP_CLASSES[m.group(1)],
              "sized_operand_segments": "AttrSizedOperandSegments" in traits or "AttrSizedOperandSegments" in body,
              "sized_result_segments": "AttrSizedResultSegments" in traits or "AttrSizedResultSegments" in body}
        for entry in let_list(body, "arguments", "ins") or []:
            constraint, _, arg = entry.rpartition(":$")
            if not arg:
                raise SystemExit(f"{where}: {name}: cannot read argument {entry!r}")
            constraint = unwrap(constraint)
            if is_attribute(constraint):
                op["attributes"].append(attribute_entry(arg, constraint))
            else:
                op["operands"].append(value_entry(arg, constraint))
        for entry in let_list(body, "results", "outs") or []:
            constraint, _, res = entry.rpartition(":$")
            op["results"].append(value_entry(res, unwrap(constraint)))
        regions = let_list(body, "regions", "region")
        if regions is not None:
            op["regions"] = len(regions)
        ops["pto." + m.group(2)] = op
    return ops, unions


def transcribe_attributes(text: str) -> tuple:
    """(attribute kinds, attribute unions). An enum attribute prints `#pto<mnemonic case>`; an attribute
    definition with an enum parameter `#pto.mnemonic<case>`; other definitions `#pto.mnemonic<...>`."""
    case_defs, enums, attrs, unions = {}, {}, {}, {}

    def case_spelling(args: str) -> str:
        fields = split_top_level(args)
        return (fields[2] if len(fields) > 2 else fields[0]).strip('"')

    for name, header, body in definitions(text):
        m = re.fullmatch(r"I32(?:Bit)?EnumAttrCase<(.*)>", header, flags=re.S)
        if m:
            case_defs[name] = case_spelling(m.group(1))
            continue
        m = re.fullmatch(r"(?:PTO_I32Enum|I32EnumAttr)<(.*)>", header, flags=re.S)
        if m:
            listed = re.search(r"\[(.*)\]", m.group(1), flags=re.S).group(1)
            cases = []
            for item in split_top_level(listed):
                inline = re.fullmatch(r"I32(?:Bit)?EnumAttrCase<(.*)>", item, flags=re.S)
                cases.append(case_spelling(inline.group(1)) if inline else case_defs[item])
            enums[name] = cases
            continue
        m = re.fullmatch(r"EnumAttr<\s*\w+\s*,\s*(\w+)\s*,\s*\"(\w+)\"\s*>", header)
        if m:
            attrs[name] = {"print": "enum", "mnemonic": m.group(2), "cases": enums[m.group(1)]}
            continue
        m = re.fullmatch(r"(?:PTO_Attr<\s*\"\w+\"\s*,\s*\"(\w+)\".*|AttrDef<.*)>", header, flags=re.S)
        if m:
            mnemonic = m.group(1) or re.search(r"let\s+mnemonic\s*=\s*\"(\w+)\"", body).group(1)
            entry = {"print": "dotted", "mnemonic": mnemonic}
            param = re.search(r"EnumParameter<(\w+)>", body)
            if param:
                entry["cases"] = enums[param.group(1)]
            attrs[name] = entry
            continue
    return attrs, unions


def transcribe_types(text: str) -> dict:
    types = {}
    for name, header, body in definitions(text):
        if header.startswith("TypeDef<"):
            types[name] = re.search(r"let\s+mnemonic\s*=\s*\"(\w+)\"", body).group(1)
    return types


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a PTOAS work tree or bare git directory")
    parser.add_argument("-o", "--output", type=Path, default=Path(__file__).with_name("pto_dialect.json"))
    args = parser.parse_args(argv)

    ops_text = strip_comments(read_source(args.checkout, _OPS_TD))
    ops, type_unions = transcribe_ops(ops_text, _OPS_TD)
    attrs, _ = transcribe_attributes(strip_comments(read_source(args.checkout, _ATTRS_TD)))
    # Attribute unions live in the ops file (`def X : AnyAttrOf<[A, B]>`).
    attr_unions = {m.group(1): [a.strip() for a in m.group(2).split(",")]
                   for m in re.finditer(r"^def\s+(\w+)\s*:\s*AnyAttrOf<\s*\[(.*?)\]\s*>", ops_text, re.M | re.S)}
    table = {
        "source": {"repository": "https://github.com/hw-native-sys/PTOAS", "commit": head_commit(args.checkout),
                   "files": [_OPS_TD, _ATTRS_TD, _TYPES_TD],
                   "note": "facts transcribed by tools/pto-check/transcribe.py; regenerate, do not edit"},
        "types": transcribe_types(strip_comments(read_source(args.checkout, _TYPES_TD))),
        "type_unions": type_unions,
        "attributes": attrs,
        "attribute_unions": attr_unions,
        "ops": dict(sorted(ops.items())),
    }
    # The ops transcribed from upstream pypto's emitter, which no PTOAS revision defines, stay as they are.
    if args.output.exists():
        kept = json.loads(args.output.read_text()).get("upstream_emitter")
        if kept:
            table["upstream_emitter"] = kept
    args.output.write_text(json.dumps(table, indent=1) + "\n")
    print(f"{args.output}: {len(ops)} ops, {len(attrs)} attributes, {len(table['types'])} types "
          f"from PTOAS {table['source']['commit']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
