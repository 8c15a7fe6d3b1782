"""An intermediate tensor a kernel reads while no task of the program writes it: undefined memory on
the device (seed 001), zeros on the simulator. The compile warns, naming the tensor and its reader.
(A helper whose body went missing once left such a tensor behind and the model's numbers drifted by a
few percent without a word; this is the word.)"""

import warnings

import pytest
import torch

PROGRAM = '''
import pypto.language as pl


@pl.jit
def reads_scratch(x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    scratch = pl.create_tensor([16, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_scratch"):
        s = pl.load(scratch, [0, 0], [16, 64])
        pl.store(pl.add(pl.load(x, [0, 0], [16, 64]), s), [0, 0], out)
    return out


@pl.jit
def writes_then_reads(x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    scratch = pl.create_tensor([16, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_scratch"):
        pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), 2.0), [0, 0], scratch)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_scratch"):
        s = pl.load(scratch, [0, 0], [16, 64])
        pl.store(pl.add(pl.load(x, [0, 0], [16, 64]), s), [0, 0], out)
    return out


@pl.jit
def starts_at_zero(x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    scratch = pl.create_tensor([16, 64], dtype=pl.FP32, init_value=0.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_scratch"):
        s = pl.load(scratch, [0, 0], [16, 64])
        pl.store(pl.add(pl.load(x, [0, 0], [16, 64]), s), [0, 0], out)
    return out
'''


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("unwritten_intermediate_kernels", PROGRAM)
    return module


def _messages(record):
    return [str(w.message) for w in record if "no task of the program writes" in str(w.message)]


def test_reading_an_intermediate_nothing_writes_is_reported(kernels):
    x = torch.randn(16, 64)
    with pytest.warns(UserWarning) as record:
        kernels.reads_scratch(x, torch.zeros(16, 64))
    messages = _messages(record)
    assert len(messages) == 1, [str(w.message) for w in record]
    assert messages[0].startswith("kernel '")
    assert ("takes the intermediate tensor 'scratch' as an input, but no task of the program writes it: on the "
            "device whatever the kernel reads of it is what its memory held before (the simulator reads zeros); "
            "write it first, or create it with pl.create_tensor(..., init_value=0)") in messages[0]


@pytest.mark.parametrize("program", ["writes_then_reads", "starts_at_zero"])
def test_a_written_or_initialised_intermediate_is_not_reported(kernels, program):
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        getattr(kernels, program)(x, out)
    assert _messages(record) == []
    torch.testing.assert_close(out, x * 3 if program == "writes_then_reads" else x)
