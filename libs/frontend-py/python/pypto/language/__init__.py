"""The PyPTO kernel language. Use it as ``import pypto.language as pl``: the compiler recognises
DSL calls by that alias, and kernel bodies are compiled from their source, never executed."""

from pypto.jit import jit
from pypto.language.dtypes import (
    BF16,
    BOOL,
    FP16,
    FP32,
    INDEX,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    DataType,
)
from pypto.language.enums import FunctionType, Level
from pypto.language.ops import add, at, div, load, mul, store, sub
from pypto.language.typing import InOut, Out, Scalar, Tensor, Tile
from pypto.language import tile, tensor

__all__ = [
    "jit", "DataType", "FunctionType", "Level", "Tensor", "Tile", "Scalar", "Out", "InOut",
    "at", "load", "store", "add", "sub", "mul", "div", "tile", "tensor",
    "BF16", "BOOL", "FP16", "FP32", "INDEX", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
]
