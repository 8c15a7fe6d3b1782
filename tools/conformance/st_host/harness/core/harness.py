"""``DataType``, ``TensorSpec``, ``ScalarSpec`` and ``PTOTestCase`` as system-test cases use them."""

import abc
import dataclasses
import enum
from typing import Any, Optional

import pytest
from pypto.runtime import RunConfig

# The platform lists cases parametrize over; st_host_plugin keeps only the --platform one.
SIM_PLATFORM_IDS = ["a2a3sim", "a5sim"]
ONBOARD_PLATFORM_IDS = ["a2a3", "a5"]
PLATFORMS = [pytest.param(p, id=p) for p in SIM_PLATFORM_IDS + ONBOARD_PLATFORM_IDS]
SIM_PLATFORMS = [pytest.param(p, id=p) for p in SIM_PLATFORM_IDS]
ONBOARD_PLATFORMS = [pytest.param(p, id=p) for p in ONBOARD_PLATFORM_IDS]


class DataType(enum.Enum):
    BF16 = "bf16"
    FP32 = "fp32"
    FP16 = "fp16"
    INT64 = "int64"
    INT32 = "int32"
    INT16 = "int16"
    INT8 = "int8"
    UINT64 = "uint64"
    UINT32 = "uint32"
    UINT16 = "uint16"
    UINT8 = "uint8"
    BOOL = "bool"
    # MX block-scale data and scales: packed E2M1 pairs, E4M3 and the E8M0 scale exponent.
    FP4 = "fp4"
    FP8E4M3FN = "fp8e4m3fn"
    FP8E8M0 = "fp8e8m0"

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, _TORCH_NAMES.get(self.value, self.value))


_TORCH_NAMES = {"bf16": "bfloat16", "fp32": "float32", "fp16": "float16", "fp4": "float4_e2m1fn_x2",
                "fp8e4m3fn": "float8_e4m3fn", "fp8e8m0": "float8_e8m0fnu"}


@dataclasses.dataclass
class TensorSpec:
    name: str
    shape: list
    dtype: DataType
    init_value: Any = None
    is_output: bool = False


@dataclasses.dataclass
class ScalarSpec:
    name: str
    dtype: DataType
    value: Any


class PTOTestCase(abc.ABC):
    """A case: its tensors, its program and its reference. Tolerances come from ``self.config``."""

    def __init__(self, config: Optional[RunConfig] = None, *, platform: Optional[str] = None, **_overrides):
        self.config = config or RunConfig()
        self._platform = platform

    @abc.abstractmethod
    def get_name(self) -> str: ...

    @abc.abstractmethod
    def define_tensors(self) -> list: ...

    @abc.abstractmethod
    def get_program(self) -> Any: ...

    @abc.abstractmethod
    def compute_expected(self, tensors: dict, params=None) -> None: ...

    def define_scalars(self) -> list:
        return []

    def get_platform(self) -> Optional[str]:
        return self._platform
