"""The PyPTO kernel language. Use it as ``import pypto.language as pl``: the compiler recognises
DSL calls by that alias, and kernel bodies are compiled from their source, never executed."""

from pypto.language.dtypes import (
    BF16,
    BOOL,
    FP4,
    FP8E4M3FN,
    FP8E5M2,
    FP8E8M0,
    FP16,
    FP32,
    FP64,
    HF4,
    HF8,
    INDEX,
    INT4,
    INT8,
    INT16,
    INT32,
    INT64,
    TASK_ID,
    UINT4,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    DataType,
)
from pypto.language.enums import (FunctionType, Level, Mem, MemorySpace, PadValue, PipeType, SplitMode,
                                  TensorLayout)
from pypto.language.ops import add, arange, at, div, gather, load, mrgsort, mul, sort32, store, sub
from pypto.language.typing import (Array, AsyncEvent, AsyncSession, DynVar, InOut, MemRef, Out,
                                    PrefetchAsyncContext, Scalar, Tensor, TensorView, Tile, TileView, Tuple, dynamic)
from pypto.language.program import function, program

# The layouts a tensor annotation's third slot names: pl.Tensor[[M, K // 32], pl.FP8E8M0, pl.MX_A_ZZ].
ND, MX_A_ZZ, MX_B_NN = TensorLayout.ND, TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN
from pypto.language import prefetch, system, tile, tensor

__all__ = [
    "jit", "DataType", "FunctionType", "Level", "Tensor", "Tile", "Scalar", "Out", "InOut",
    "at", "load", "store", "add", "sub", "mul", "div", "tile", "tensor", "system", "sort32", "mrgsort", "gather", "arange",
    "BF16", "BOOL", "FP16", "FP32", "INDEX", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
    "program", "function", "Mem", "MemorySpace", "MemRef", "PadValue", "PipeType", "SplitMode", "Tuple",
    "INT4", "UINT4", "FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP64", "HF4", "HF8", "TASK_ID",
    "Array", "DynVar", "dynamic", "TensorLayout", "TensorView", "TileView", "ND", "MX_A_ZZ", "MX_B_NN",
    "prefetch", "PrefetchAsyncContext", "AsyncEvent", "AsyncSession",
]


def __getattr__(name: str):
    if name == "jit":
        # Imported on first use: pypto.jit builds on this package's dtypes and annotations, so
        # importing it here, while this package initialises, would make `import pypto.jit` circular.
        from pypto.jit import jit

        globals()["jit"] = jit
        return jit
    # Every other DSL operation (pl.exp, pl.matmul, pl.range, ...) is only read from kernel source;
    # here it is a name that explains itself if a program calls it as Python.
    if name.startswith("__"):
        raise AttributeError(name)
    from pypto.language.ops import _compiled_only

    return _compiled_only(name)
