"""Element types, spelled as in the DSL (``pl.FP32``)."""


class DataType:
    """A DSL dtype. Only its name matters: the compiler reads dtypes from the kernel's source."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"


BOOL = DataType("BOOL")
INT8 = DataType("INT8")
INT16 = DataType("INT16")
INT32 = DataType("INT32")
INT64 = DataType("INT64")
UINT8 = DataType("UINT8")
UINT16 = DataType("UINT16")
UINT32 = DataType("UINT32")
UINT64 = DataType("UINT64")
INDEX = DataType("INDEX")
FP16 = DataType("FP16")
FP32 = DataType("FP32")
BF16 = DataType("BF16")
# Less common types: packed 4-bit, 8-bit floats, HiSilicon formats, and the runtime task handle.
INT4 = DataType("INT4")
UINT4 = DataType("UINT4")
FP4 = DataType("FP4")
FP8E4M3FN = DataType("FP8E4M3FN")
FP8E5M2 = DataType("FP8E5M2")
FP8E8M0 = DataType("FP8E8M0")
FP64 = DataType("FP64")
HF4 = DataType("HF4")
HF8 = DataType("HF8")
TASK_ID = DataType("TASK_ID")
