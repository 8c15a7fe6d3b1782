"""Declares @pl.jit.extern AscendC kernels from tests/python/kernels/ascendc/ for the dtypes a test
runs: the declarations are module text formatted per dtype (a dtype in an annotation must be
spelled, not closed over), imported from a temporary file."""

import importlib.util
import pathlib
import textwrap

KERNELS = pathlib.Path(__file__).parent / "kernels" / "ascendc"

# torch dtype name -> (pl dtype, kernel file suffix)
DTYPES = {"float32": ("pl.FP32", "fp32"), "float16": ("pl.FP16", "fp16")}


def declare(directory, template, torch_dtype, **values):
    """`template` formatted with {dtype} (pl.FP32...), {source} (the kernel path for {kernel}_{suffix}.cpp)
    and `values`, imported as a module."""
    pl_dtype, suffix = DTYPES[str(torch_dtype).removeprefix("torch.")]
    kernel = values.pop("kernel")
    text = "import pypto.language as pl\n\n" + textwrap.dedent(template).format(
        dtype=pl_dtype, source=KERNELS / f"{kernel}_{suffix}.cpp", **values)
    path = pathlib.Path(directory) / f"{kernel}_{suffix}_decl.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"{kernel}_{suffix}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
