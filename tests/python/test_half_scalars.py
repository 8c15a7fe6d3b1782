"""FP16 and BF16 scalar parameters of kernels: the value is rounded to the scalar's dtype and packed
into the low 16 bits of its 64-bit argument slot (the rest zero), as upstream's to_u64 packs it and
the kernel's union reads it back; the tile-scalar op then computes as for an FP32 scalar."""

import pytest
import torch

import pypto

KERNELS = '''\
@pl.jit.incore
def scale_tile(x: pl.Tensor[[16, 64], DTYPE], y: pl.Out[pl.Tensor[[16, 64], DTYPE]], scale: pl.Scalar[DTYPE]):
    t = pl.load(x, [0, 0], [16, 64])
    y = pl.store(pl.mul(t, scale), [0, 0], y)
    return y


@pl.jit
def scaled(x: pl.Tensor[[16, 64], DTYPE], y: pl.Out[pl.Tensor[[16, 64], DTYPE]], scale: pl.Scalar[DTYPE]):
    return scale_tile(x, y, scale)


@pl.program
class Shifted:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[16, 64], DTYPE], y: pl.Out[pl.Tensor[[16, 64], DTYPE]], s: pl.Scalar[DTYPE]) -> pl.Tensor[[16, 64], DTYPE]:
        t = pl.load(x, [0, 0], [16, 64])
        return pl.store(pl.add(t, s), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], DTYPE], y: pl.Out[pl.Tensor[[16, 64], DTYPE]]):
        self.shift(x, y, -0.1)
'''

DTYPES = {"FP16": torch.float16, "BF16": torch.bfloat16}


@pytest.fixture(params=sorted(DTYPES))
def kernels(request, write_dsl):
    module, _ = write_dsl(f"half_scalars_{request.param}", f"DTYPE = pl.{request.param}\n\n" + KERNELS)
    module.torch_dtype = DTYPES[request.param]
    return module


# 1e-6 and 3e-8 are FP16 subnormals (3e-8 rounds up to the smallest, 2**-24).
@pytest.mark.parametrize("scale", [0.5, -3.0, 0.1, 1.0 / 3.0, 1000.5, 1e-6, 3e-8])
def test_a_16_bit_float_scalar_multiplies_a_tile(kernels, scale):
    dtype = kernels.torch_dtype
    x = torch.randn(16, 64).to(dtype)
    y = torch.zeros(16, 64, dtype=dtype)
    kernels.scaled(x, y, scale)
    # The kernel sees the scalar rounded to its dtype; each product is computed in FP32 and rounded back.
    expected = (x.float() * torch.tensor(scale, dtype=dtype).float()).to(dtype)
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_a_16_bit_float_literal_reaches_the_kernel_in_the_low_bits_of_its_slot(kernels):
    dtype = kernels.torch_dtype
    compiled = pypto.ir.compile(kernels.Shifted)
    x = torch.randn(16, 64).to(dtype)
    y = torch.zeros(16, 64, dtype=dtype)
    compiled(x, y)
    expected = (x.float() + torch.tensor(-0.1, dtype=dtype).float()).to(dtype)
    torch.testing.assert_close(y, expected, rtol=0, atol=0)
    # The orchestration passes the bit pattern, zero-extended: -0.1 is 0xae66 in FP16, 0xbdcd in BF16.
    source = next((compiled.output_dir / "orchestration").glob("*.cpp")).read_text()
    bits = {torch.float16: "0xae66", torch.bfloat16: "0xbdcd"}[dtype]
    name = {torch.float16: "FP16", torch.bfloat16: "BF16"}[dtype]
    assert f".add_scalar((uint64_t){bits} /* {name} -0.1 */);" in source
