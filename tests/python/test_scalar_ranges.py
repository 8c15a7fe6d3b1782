"""A Python number passed for a scalar parameter is checked against the parameter's dtype: a value the
dtype cannot hold is refused with the parameter, the value and the range, never wrapped, saturated or
left to pybind11's "Unable to cast Python instance". A negative INT32 reaches a hand-written kernel's
64-bit args[] slot in two's complement, as upstream packs it."""

import pytest
import torch
from conftest import import_source

KERNELS = '''
import pypto.language as pl

WIDE = 2**70


@pl.jit
def add_int32(a: pl.Tensor[[16, 32], pl.INT32], s: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.add(pl.load(a, [0, 0], [16, 32]), s)
    return c


@pl.jit
def add_uint8(a: pl.Tensor[[16, 32], pl.INT32], s: pl.Scalar[pl.UINT8], c: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.add(pl.load(a, [0, 0], [16, 32]), s)
    return c


@pl.jit
def add_index(a: pl.Tensor[[16, 32], pl.INT32], s: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.add(pl.load(a, [0, 0], [16, 32]), s)
    return c


@pl.jit
def add_plain(a: pl.Tensor[[16, 32], pl.INT32], s: int, c: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.add(pl.load(a, [0, 0], [16, 32]), s)
    return c


@pl.jit
def scale_fp16(a: pl.Tensor[[16, 32], pl.FP16], s: pl.Scalar[pl.FP16], c: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.mul(pl.load(a, [0, 0], [16, 32]), s)
    return c


@pl.jit
def uses_wide(a: pl.Tensor[[16, 32], pl.INT32], c: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.add(pl.load(a, [0, 0], [16, 32]), WIDE)
    return c


@pl.jit.extern(core_type="aiv", source="raw_slot.cpp")
def raw_slot(out: pl.InOut[pl.Tensor[[4, 8], pl.INT32]], n: pl.Scalar[pl.INT32]) -> pl.Tensor[[4, 8], pl.INT32]: ...


@pl.jit
def show_slot(out: pl.InOut[pl.Tensor[[4, 8], pl.INT32]], n: pl.Scalar[pl.INT32]):
    out = raw_slot(out, n)
    return out
'''

# Writes the 64-bit args[] slot of its scalar into the first two INT32 elements (low word first).
RAW_SLOT = """
#include <cstdint>
#include <cstring>
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
  ChipTensor* t = reinterpret_cast<ChipTensor*>(args[0]);
  int32_t* out = reinterpret_cast<int32_t*>(t->buffer.addr) + t->start_offset;
  int64_t slot = args[1];
  std::memcpy(out, &slot, sizeof slot);
}
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    directory = tmp_path_factory.mktemp("scalar_kernels")
    (directory / "raw_slot.cpp").write_text(RAW_SLOT)
    return import_source(directory / "scalar_kernels.py", KERNELS)


def _ints():
    return torch.zeros(16, 32, dtype=torch.int32), torch.zeros(16, 32, dtype=torch.int32)


@pytest.mark.parametrize("kernel, value, message", [
    ("add_int32", 2**40, "add_int32: argument 's' is a pl.INT32 scalar, which holds -2147483648 to 2147483647; "
                         "got 1099511627776"),
    ("add_int32", 2**31, "add_int32: argument 's' is a pl.INT32 scalar, which holds -2147483648 to 2147483647; "
                         "got 2147483648"),
    ("add_uint8", -1, "add_uint8: argument 's' is a pl.UINT8 scalar, which holds 0 to 255; got -1"),
    ("add_uint8", 256, "add_uint8: argument 's' is a pl.UINT8 scalar, which holds 0 to 255; got 256"),
    ("add_index", 2**70, "add_index: argument 's' is a pl.INDEX scalar, which holds -9223372036854775808 to "
                         "9223372036854775807; got 1180591620717411303424"),
    ("add_plain", 2**70, "add_plain: argument 's' is a pl.INT64 scalar, which holds -9223372036854775808 to "
                         "9223372036854775807; got 1180591620717411303424"),
])
def test_an_integer_outside_the_scalar_dtype_is_refused(kernels, kernel, value, message):
    a, c = _ints()
    with pytest.raises(ValueError) as error:
        getattr(kernels, kernel)(a, value, c)
    assert str(error.value) == message


def test_a_float_beyond_the_scalar_dtype_is_refused(kernels):
    a, c = torch.ones(16, 32, dtype=torch.float16), torch.zeros(16, 32, dtype=torch.float16)
    with pytest.raises(ValueError) as error:
        kernels.scale_fp16(a, 70000.0, c)
    assert str(error.value) == ("scale_fp16: argument 's' is a pl.FP16 scalar, whose largest finite value is 65504.0; "
                                "got 70000.0")


def test_a_module_constant_beyond_64_bits_is_refused(kernels):
    a, c = _ints()
    with pytest.raises(ValueError) as error:
        kernels.uses_wide(a, c)
    assert str(error.value) == ("uses_wide: the constant 'WIDE' = 1180591620717411303424 does not fit in 64 bits "
                                "(-2**63 to 2**63 - 1), which is what a literal of the program holds")


@pytest.mark.parametrize("kernel, value", [("add_int32", -2**31), ("add_int32", 2**31 - 1), ("add_int32", -3),
                                           ("add_uint8", 255), ("add_uint8", 0)])
def test_values_at_the_edges_of_the_range_run(kernels, kernel, value):
    a, c = _ints()
    a[:] = 0
    getattr(kernels, kernel)(a, value, c)
    assert torch.equal(c, torch.full_like(c, value))


def test_a_compiled_program_called_with_an_out_of_range_scalar_names_the_range(kernels):
    a, c = _ints()
    compiled = kernels.add_uint8.compile(a, 7, c)
    with pytest.raises(ValueError) as error:
        compiled(a, 300, c)
    assert str(error.value) == "argument 's' is a pl.UINT8 scalar, which holds 0 to 255; got 300"


def test_a_negative_int32_fills_the_64_bit_slot_in_twos_complement(kernels):
    out = torch.zeros(4, 8, dtype=torch.int32)
    kernels.show_slot(out, -3)
    low, high = out[0, 0].item(), out[0, 1].item()
    assert (low, high) == (-3, -1)
