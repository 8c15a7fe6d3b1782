"""Types in a @pl.program as upstream's programs write them: a shape named by a list the builder
computed, a tile annotation that names no memory space, and a plain tensor parameter a kernel writes."""

import pypto
import pytest
import torch

import pypto.language as pl
from pypto.ir.pass_manager import PassManager
from pypto.language.parser import ParserTypeError
from pypto.testing import TensorSpec, run


def test_a_shape_may_be_a_list_the_builder_computed():
    shape = [4, 8]

    @pl.program
    class Listed:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[shape, pl.FP32]) -> pl.Tensor[shape, pl.FP32]:
            return x

    assert "def main(self, x: pl.Tensor[[4, 8], pl.FP32]) -> pl.Tensor[[4, 8], pl.FP32]:" in str(Listed)


def product_program(annotation: str):
    source = f'''
@pl.program
class Product:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.product(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def product(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        la = pl.move(ta, target_memory=pl.MemorySpace.Left)
        rb = pl.move(tb, target_memory=pl.MemorySpace.Right)
        acc: {annotation} = pl.matmul(la, rb)
        c = pl.store(acc, [0, 0], c)
        return c
'''
    return source


def test_a_tile_annotation_without_a_memory_space_keeps_the_values(write_dsl):
    module, _ = write_dsl("product", product_program("pl.Tile[[16, 16], pl.FP32]"))
    assert "acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(la, rb)" in str(module.Product)
    specs = [TensorSpec("a", [16, 16], torch.float32, init_value=torch.randn),
             TensorSpec("b", [16, 16], torch.float32, init_value=torch.randn),
             TensorSpec("c", [16, 16], torch.float32)]

    def golden(t):
        t["c"][:] = t["a"] @ t["b"]

    result = run(module.Product, specs, golden, platform="a2a3sim", rtol=1e-4, atol=1e-4)
    assert result.passed, result.error


def test_a_tile_annotation_naming_another_memory_space_is_an_error(write_dsl):
    with pytest.raises(ParserTypeError) as error:
        write_dsl("product_vec", product_program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]"))
    assert ("'acc' is declared pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] but the value assigned is "
            "pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]") in str(error.value), str(error.value)


ACCUMULATE = '''
@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], c: C_ANNOTATION) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(2):
                c_prev = pl.slice(c, [16, 32], [0, i * 32])
                c_next = pl.add(c_prev, pl.slice(a, [16, 32], [0, i * 32]))
                c = pl.assemble(c, c_next, [0, i * 32])
        return c
'''


def test_a_plain_tensor_parameter_a_kernel_writes_is_ordered_as_inout_but_not_copied_back(write_dsl):
    from pypto.runtime.declared_inputs import WrittenInputWarning

    module, _ = write_dsl("accumulate", ACCUMULATE.replace("C_ANNOTATION", "pl.Tensor[[16, 64], pl.FP32]"))
    lowered = str(PassManager().run_passes(module.Accumulate))
    assert ("def main(self, a: pl.Tensor[[16, 64], pl.FP32], c: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) "
            "-> pl.Tensor[[16, 64], pl.FP32]:") in lowered, lowered
    # The entry declared c In: a device skips its copy-back (seed 001), and so do the simulators.
    with pytest.warns(WrittenInputWarning, match="parameter 'c' of 'main' is a plain pl.Tensor"):
        compiled = pypto.ir.compile(module.Accumulate)
    a, c = torch.randn(16, 64), torch.randn(16, 64)
    before = c.clone()
    compiled(a, c)
    torch.testing.assert_close(c, before)


def test_an_inout_parameter_accumulates(write_dsl):
    module, _ = write_dsl("accumulate", ACCUMULATE.replace("C_ANNOTATION", "pl.InOut[pl.Tensor[[16, 64], pl.FP32]]"))
    specs = [TensorSpec("a", [16, 64], torch.float32, init_value=torch.randn),
             TensorSpec("c", [16, 64], torch.float32, init_value=torch.randn, is_output=True)]

    def golden(t):
        t["c"][:] = t["c"] + t["a"]

    result = run(module.Accumulate, specs, golden, platform="a2a3sim")
    assert result.passed, result.error
