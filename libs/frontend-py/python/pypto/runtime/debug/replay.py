"""Replaying a build directory: ``main`` runs it again from the command line (what each build's
``debug/run.py`` calls), and ``invalidate_binary_cache`` forgets what a rerun would otherwise reuse."""

import argparse
from pathlib import Path
from typing import Callable, Optional, Sequence


def invalidate_binary_cache(work_dir) -> list:
    """Forgets compiled binaries of ``work_dir`` so that the next run rebuilds them; returns what it
    removed.

    The simulator keeps no binaries: it runs ``lowered_program.py``, reloaded whenever it changes,
    so there is nothing to remove."""
    if not Path(work_dir).is_dir():
        raise FileNotFoundError(f"build directory {str(work_dir)!r} does not exist")
    return []


def main(work_dir, argv: Sequence[str], inline_inputs: Callable[[], dict], *,
         default_platform: str = "a2a3sim") -> int:
    """Runs the program compiled into ``work_dir`` once and reports its outputs; returns the exit
    status (1 when an output differs from its saved expectation).

    Each argument is the tensor saved as ``NAME.pt`` in the inputs folder (``--inputs``, default the
    build's ``data/in/`` where it exists, as pypto-lib's golden harness saves them), else the one
    ``inline_inputs()`` makes. Editing ``lowered_program.py`` first runs the edit."""
    import torch

    from pypto.runtime.build_dir import execute_compiled, read_manifest
    from pypto.runtime.compiled import Parameter
    from pypto.runtime.runner import DfxOptions

    work_dir = Path(work_dir)
    options = _parser(work_dir, default_platform).parse_args(list(argv))
    parameters = [Parameter.from_json(entry) for entry in read_manifest(work_dir)["parameters"]]
    torch.manual_seed(options.seed)
    arguments = _arguments(parameters, inline_inputs(), _folder(options.inputs, work_dir / "data" / "in"))
    dfx = DfxOptions(enable_dump_args=options.dump_args, enable_chip_swimlane=options.swimlane)
    execute_compiled(work_dir, [arguments[p.name] for p in parameters], platform=options.platform,
                     device_id=options.device_id, dfx=dfx if dfx.any() else None)
    expected = _folder(options.expected, work_dir / "data" / "out")
    failed = False
    for param in parameters:
        if param.kind != "tensor" or not param.is_output:
            continue
        output = arguments[param.name]
        line = f"{param.name}: {_summary(output)}"
        if expected is not None and (expected / f"{param.name}.pt").is_file():
            matches, verdict = _compare(output, torch.load(expected / f"{param.name}.pt", weights_only=True), options)
            failed |= not matches
            line += f"; {verdict} {expected / param.name}.pt"
        print(line, flush=True)
        if options.save_outputs:
            Path(options.save_outputs).mkdir(parents=True, exist_ok=True)
            torch.save(output, Path(options.save_outputs) / f"{param.name}.pt")
    return 1 if failed else 0


def _parser(work_dir: Path, default_platform: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="debug/run.py",
                                     description=f"Runs the program compiled into {work_dir} again.")
    parser.add_argument("-p", "--platform", default=default_platform,
                        help=f"platform to run on; the one it was compiled for (default {default_platform})")
    parser.add_argument("--device-id", type=int, default=0, help="device on a device platform (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inline inputs' random values (default 0)")
    parser.add_argument("--inputs", metavar="DIR", help="folder of NAME.pt arguments (default data/in/ if present)")
    parser.add_argument("--expected", metavar="DIR",
                        help="folder of NAME.pt outputs to compare with (default data/out/ if present)")
    parser.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance of the comparison")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of the comparison")
    parser.add_argument("--save-outputs", metavar="DIR", help="save each output as DIR/NAME.pt")
    parser.add_argument("--dump-args", type=int, default=0, metavar="LEVEL",
                        help="args dump into dfx_outputs/ (1 tagged tensors, 2 every argument, 3 metadata)")
    parser.add_argument("--swimlane", type=int, default=0, metavar="LEVEL",
                        help="chip swimlane into dfx_outputs/ (levels 1..4)")
    return parser


def _folder(chosen: Optional[str], default: Path) -> Optional[Path]:
    if chosen is not None:
        if not Path(chosen).is_dir():
            raise FileNotFoundError(f"{chosen!r} is not a folder")
        return Path(chosen)
    return default if default.is_dir() else None


def _arguments(parameters, inline: dict, saved: Optional[Path]) -> dict:
    """Every argument by name: the saved one where there is a file for it, else the inline one."""
    import torch

    arguments = {}
    for param in parameters:
        path = saved / f"{param.name}.pt" if saved is not None else None
        if path is not None and path.is_file():
            arguments[param.name] = torch.load(path, weights_only=True)
        elif inline.get(param.name) is not None:
            arguments[param.name] = inline[param.name]
        else:
            raise ValueError(f"no value for parameter {param.name!r}: set it in _inline_inputs()")
    return arguments


def _summary(tensor) -> str:
    text = f"{list(tensor.shape)} {str(tensor.dtype).removeprefix('torch.')}"
    if tensor.numel() == 0:
        return text
    values = tensor.double()
    return f"{text}, min {values.min().item():.6g}, max {values.max().item():.6g}, mean {values.mean().item():.6g}"


def _compare(output, expected, options) -> tuple:
    """Whether ``output`` is close to ``expected``, and the words that say so."""
    import torch

    if output.shape != expected.shape:
        return False, f"differs in shape from {list(expected.shape)} in"
    if torch.allclose(output.double(), expected.double(), rtol=options.rtol, atol=options.atol, equal_nan=True):
        return True, "matches"
    difference = (output.double() - expected.double()).abs().max().item()
    return False, f"differs (largest difference {difference:.6g}) from"
