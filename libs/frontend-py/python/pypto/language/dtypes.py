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
