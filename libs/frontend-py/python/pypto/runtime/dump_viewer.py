"""Reads an args dump (``RunConfig(enable_dump_args=...)``): a table of its records, and one record's values.

    python -m pypto.runtime.dump_viewer [DIR] [--task HEX] [--stage before|after] [--role input|output|inout]
                                        [--arg N] [--index N] [--export] [--limit N]

``DIR`` is a build directory, its ``dfx_outputs/``, or the ``args_dump/`` directory itself (default: the
current directory). The flags are those of upstream's ``simpler_setup.tools.dump_viewer``. Installed, the
same tool is the ``pypto-dump-viewer`` command.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

import numpy as np

MANIFEST = "args_dump.json"
PAYLOAD = "args.bin"

# Runtime dtype names (the manifest's spelling) to numpy element types. BFLOAT16 has no numpy type: it
# is read as uint16 and widened by decode().
_NUMPY = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "BFLOAT16": np.uint16, "INT8": np.int8, "INT16": np.int16,
    "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
    "UINT64": np.uint64, "BOOL": np.bool_, "FP8E4M3FN": np.uint8, "FP8E8M0": np.uint8, "FP4E2M1": np.uint8,
}


def find_dump_dir(path) -> Path:
    """The directory holding ``args_dump.json``: ``path`` itself, or its ``args_dump/`` or
    ``dfx_outputs/args_dump/``."""
    base = Path(path)
    for candidate in (base, base / "args_dump", base / "dfx_outputs" / "args_dump"):
        if (candidate / MANIFEST).is_file():
            return candidate
    raise FileNotFoundError(
        f"no {MANIFEST} under {base} (looked in ., args_dump/ and dfx_outputs/args_dump/); "
        "run with RunConfig(enable_dump_args=1|2|3) on a simulator first"
    )


def load(path) -> dict:
    """The manifest of the dump under ``path`` (see find_dump_dir), with ``dir`` set to where it is."""
    directory = find_dump_dir(path)
    manifest = json.loads((directory / MANIFEST).read_text())
    manifest["dir"] = directory
    return manifest


def decode(record: dict, payload: bytes) -> np.ndarray:
    """A record's payload as an array of its shape: floats (bf16 and fp16 widened exactly to float32)
    or integers. A scalar is its 64-bit pattern."""
    dtype = record["dtype"]
    if dtype not in _NUMPY:
        raise ValueError(f"cannot decode dtype {dtype}")
    values = np.frombuffer(payload, dtype=_NUMPY[dtype])
    if dtype == "BFLOAT16":  # the upper half of a float32
        values = (values.astype(np.uint32) << 16).view(np.float32)
    elif dtype == "FLOAT16":
        values = values.astype(np.float32)
    if record["kind"] == "tensor" and values.size == int(np.prod(record["shape"])):
        values = values.reshape(record["shape"])
    return values


def read_values(manifest: dict, index: int) -> np.ndarray:
    """The decoded payload of record ``index``; an empty array when only its metadata was recorded."""
    record = manifest["records"][index]
    with open(manifest["dir"] / PAYLOAD, "rb") as payload:
        payload.seek(record["bin_offset"])
        data = payload.read(record["bin_size"])
    return decode(record, data)


def select(manifest: dict, task: Optional[str] = None, stage: Optional[str] = None, role: Optional[str] = None,
           arg: Optional[int] = None) -> list:
    """Indices of the records matching every filter given."""
    wanted_task = int(task, 16) if task is not None else None
    chosen = []
    for index, record in enumerate(manifest["records"]):
        if wanted_task is not None and int(record["task_id"], 16) != wanted_task:
            continue
        if stage is not None and not record["stage"].startswith(stage):
            continue
        if role is not None and record["role"] != role:
            continue
        if arg is not None and record["arg_index"] != arg:
            continue
        chosen.append(index)
    return chosen


_COLUMNS = ("#", "task", "func", "kernel", "stage", "role", "arg", "kind", "dtype", "shape", "bytes")


def _row(index: int, record: dict) -> tuple:
    shape = "x".join(str(d) for d in record["shape"])
    size = "truncated" if record.get("truncated") else "dropped" if record.get("dropped") else str(record["bin_size"])
    return (str(index), record["task_id"], ",".join(str(f) for f in record["func_id"]), record["kernel"],
            record["stage"].split("_")[0], record["role"], str(record["arg_index"]), record["kind"], record["dtype"],
            shape, size)


def format_table(manifest: dict, indices: list) -> str:
    """A header with the counters, then one aligned row per record."""
    counters = manifest["counters"]
    lines = [
        f"args dump: {manifest['dir']} (level {manifest['level']}): {len(manifest['records'])} records, "
        f"{counters['before_dispatch']} before_dispatch, {counters['after_completion']} after_completion, "
        f"{counters['truncated']} truncated, {counters['dropped']} dropped"
    ]
    rows = [_COLUMNS] + [_row(i, manifest["records"][i]) for i in indices]
    widths = [max(len(row[c]) for row in rows) for c in range(len(_COLUMNS))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return "\n".join(lines)


def _value_text(value) -> str:
    """A float as Python writes it (shortest text that reads back; what torch's tolist() gives), else
    the integer or bool."""
    return repr(float(value)) if isinstance(value, np.floating) else str(value.item())


def format_record(manifest: dict, index: int, limit: int = 1024) -> str:
    """Record ``index``'s metadata, then its values: one line per innermost row, at most ``limit`` values."""
    record = manifest["records"][index]
    lines = [f"record {index}:"]
    for key in ("task_id", "func_id", "kernel", "core_type", "core_id", "stage", "role", "arg_index", "kind",
                "tagged", "dtype", "shape", "strides", "start_offset", "is_contiguous", "bin_offset", "bin_size",
                "truncated", "dropped"):
        if key in record:
            lines.append(f"  {key}: {record[key]}")
    if record["kind"] == "scalar":
        lines.append(f"  value: {record['value']}")
    if not record["bin_size"]:
        lines.append("  (no payload recorded)")
        return "\n".join(lines)
    values = read_values(manifest, index)
    rows = values.reshape(-1, values.shape[-1]) if values.ndim > 1 else values.reshape(1, -1)
    lines.append("  values:")
    shown = 0
    for row in rows:
        if shown >= limit:
            lines.append(f"  ... ({values.size - shown} more)")
            break
        take = row[: limit - shown]
        lines.append("    " + " ".join(_value_text(v) for v in take))
        shown += len(take)
    return "\n".join(lines)


def export(manifest: dict, indices: list, out_dir: Path) -> list:
    """Writes each record's values as ``<#>_task<id>_<stage>_<role>_arg<N>.npy``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in indices:
        record = manifest["records"][index]
        if not record["bin_size"]:
            continue
        name = f"{index}_task{record['task_id']}_{record['stage']}_{record['role']}_arg{record['arg_index']}.npy"
        np.save(out_dir / name, read_values(manifest, index))
        paths.append(out_dir / name)
    return paths


def _hex(text: str) -> str:
    try:
        int(text, 16)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a hexadecimal task id: {text!r}") from None
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="pypto-dump-viewer", description="Shows an args dump's records and values.")
    parser.add_argument("dir", nargs="?", default=".", help="build dir, its dfx_outputs/, or args_dump/ (default: .)")
    parser.add_argument("--task", "-t", type=_hex, help="only this task id (hex, as the table shows it)")
    parser.add_argument("--stage", choices=("before", "after"), help="before_dispatch or after_completion")
    parser.add_argument("--role", choices=("input", "output", "inout"))
    parser.add_argument("--arg", type=int, help="only this argument index of the task's args[]")
    parser.add_argument("--index", type=int, help="show this record's values (the table's # column)")
    parser.add_argument("--export", action="store_true", help="write the selected records' values as .npy files")
    parser.add_argument("--limit", type=int, default=1024, help="values shown of one record (default 1024)")
    options = parser.parse_args(argv)
    try:
        manifest = load(options.dir)
    except (FileNotFoundError, json.JSONDecodeError) as error:
        print(f"pypto-dump-viewer: {error}", file=sys.stderr)
        return 1
    if options.index is not None:
        if not 0 <= options.index < len(manifest["records"]):
            print(f"pypto-dump-viewer: no record {options.index} (there are {len(manifest['records'])})",
                  file=sys.stderr)
            return 1
        indices = [options.index]
        print(format_record(manifest, options.index, options.limit))
    else:
        indices = select(manifest, options.task, options.stage, options.role, options.arg)
        print(format_table(manifest, indices))
    if options.export:
        for path in export(manifest, indices, manifest["dir"] / "export"):
            print(f"exported {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
