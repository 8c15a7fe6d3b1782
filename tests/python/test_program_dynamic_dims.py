"""``pl.dynamic`` dimensions in ``@pl.program`` classes: a kernel's dimensions bound by the tensors its
callers pass, and an entry compiled for the shapes of each run."""

import pytest
import torch

import pypto.ir
import pypto.runtime
import pypto.testing as testing
from pypto.language.parser import ParserTypeError
from pypto.language.program import DynamicProgram

DYN = "M = pl.dynamic(\"M\")\nN = pl.dynamic(\"N\")\n\n\n"

# The kernel's dimensions come from the orchestration's static tensors; two calls at two extents
# give two kernels.
KERNEL_BOUND_BY_CALLS = DYN + '''@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        for i in pl.range(0, rows, 8):
            t = pl.load(x, [i, 0], [8, N])
            out = pl.store(pl.mul(t, 2.0), [i, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[8, 64], pl.FP32],
             a_out: pl.Out[pl.Tensor[[16, 32], pl.FP32]], b_out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]
             ) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[8, 64], pl.FP32]]:
        a_out = self.scale(a, a_out)
        b_out = self.scale(b, b_out)
        return a_out, b_out
'''


def test_a_kernel_takes_its_dimensions_from_each_call(write_dsl):
    module, _ = write_dsl("kernel_bound", KERNEL_BOUND_BY_CALLS)
    program = module.Scale
    kernels = {f.name: f for f in program.functions.values() if f.function_type == "InCore"}
    assert sorted(kernels) == ["scale", "scale_1"]
    text = str(program)
    assert "def scale(self, x: pl.Tensor[[16, 32], pl.FP32]" in text
    assert "def scale_1(self, x: pl.Tensor[[8, 64], pl.FP32]" in text
    assert "self.scale_1(b, b_out)" in text
    a, b = torch.randn(16, 32), torch.randn(8, 64)
    a_out, b_out = torch.zeros(16, 32), torch.zeros(8, 64)
    pypto.runtime.run(program, a, b, a_out, b_out)
    torch.testing.assert_close(a_out, a * 2)
    torch.testing.assert_close(b_out, b * 2)


# Upstream's dynamic paged attention: a kernel with dynamic dimensions takes windows the
# orchestration slices; each window's shape binds them, and the kernel reads the tensor in place.
KERNEL_BOUND_BY_SLICES = DYN + '''@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        out = pl.store(pl.mul(pl.load(x, [0, 0], [16, N]), 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(4):
            xi = pl.slice(x, [16, 32], [i * 16, 0])
            yi = pl.slice(y, [16, 32], [i * 16, 0])
            yi = self.double(xi, yi)
        return y
'''


def test_a_kernel_takes_its_dimensions_from_the_slices_passed_to_it(write_dsl):
    module, _ = write_dsl("slice_bound", KERNEL_BOUND_BY_SLICES)
    program = module.Rows
    text = str(program)
    assert "def double(self, x: pl.Tensor[[16, 32], pl.FP32]" in text, text
    assert "xi: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.slice(x, [16, 32], [i * 16, 0])" in text, text
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    pypto.runtime.run(program, x, y)
    torch.testing.assert_close(y, x * 2)


# The entry's own parameters are dynamic: compiled for the shapes of each run.
DYNAMIC_ENTRY = DYN + '''@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M, N], pl.FP32]], rows: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, N], pl.FP32]:
        cols = pl.tensor.dim(a, 1)
        for i in pl.range(0, rows, 8):
            t: pl.Tile[[8, cols], pl.FP32, pl.Mem.Vec] = pl.add(pl.load(a, [i, 0], [8, N]), pl.load(b, [i, 0], [8, N]))
            c = pl.store(t, [i, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        rows: pl.Scalar[pl.INT64] = pl.tensor.dim(a, 0)
        c = self.add(a, b, c, rows)
        return c
'''


@pytest.mark.parametrize("shape", [(16, 16), (32, 64)])
def test_a_dynamic_entry_runs_at_the_shapes_it_is_given(write_dsl, shape):
    module, _ = write_dsl("dynamic_entry", DYNAMIC_ENTRY)
    specs = [testing.TensorSpec("a", list(shape), torch.float32, init_value=torch.randn),
             testing.TensorSpec("b", list(shape), torch.float32, init_value=torch.randn),
             testing.TensorSpec("c", list(shape), torch.float32, is_output=True)]

    def golden(values):
        values["c"][:] = values["a"] + values["b"]

    result = testing.run(module.Add, specs, golden)
    assert result.passed, result.error


def test_a_dynamic_entry_is_specialised_once_per_shape(write_dsl):
    module, _ = write_dsl("dynamic_entry_cache", DYNAMIC_ENTRY)
    program = module.Add
    assert isinstance(program, DynamicProgram)
    assert repr(program) == "<DynamicProgram Add: entry 'main' with pl.dynamic dimensions M, N>"
    assert str(program).splitlines()[0] == (
        "# @pl.program Add, not specialised: its entry 'main' takes the pl.dynamic dimensions M, N from the "
        "tensors it runs with")
    assert "class Add:" in str(program)
    small = program.specialise(torch.zeros(16, 16), torch.zeros(16, 16), torch.zeros(16, 16))
    assert program.specialise(a=((16, 16), "FP32"), b=((16, 16), "FP32"), c=((16, 16), "FP32")) is small
    wide = program.specialise(torch.zeros(16, 48), torch.zeros(16, 48), torch.zeros(16, 48))
    assert "def main(self, a: pl.Tensor[[16, 48], pl.FP32]" in str(wide)
    assert "def add(self, a: pl.Tensor[[16, 48], pl.FP32]" in str(wide)
    assert [f.name for f in wide.functions.values()] == ["add", "main"]
    with pytest.raises(AttributeError, match=r"Add has no 'functions' before it is specialised"):
        program.functions
    with pytest.raises(TypeError, match=r"Add's entry 'main' takes the pl.dynamic dimensions M, N from its "
                                        r"tensors, so it is compiled for their shapes"):
        pypto.ir.compile(program)


def test_a_dimension_the_parameters_disagree_on_has_no_single_extent(write_dsl):
    # Each parameter's M is its own tensor's extent; the name M then has no single value.
    module, path = write_dsl("disagree", DYN + '''@pl.program
class Flat:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        rows = M + 0
        return c
''')
    with pytest.raises(ParserTypeError) as info:
        module.Flat.specialise(torch.zeros(64), torch.zeros(8, 8))
    assert info.value.message == ("the dynamic dimension 'M' has no single extent here: it is 64 for parameter 'a' "
                                  "but 8 for parameter 'c'")
    assert info.value.location == f"{path}:11:16"


def test_a_call_that_does_not_fit_the_kernel_is_reported_at_the_call(write_dsl):
    source = DYN + '''@pl.program
class Mismatch:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [M, 16]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        out = self.copy(x, out)
        return out
'''
    with pytest.raises(ParserTypeError) as info:
        write_dsl("mismatch", source)
    path = info.value.location.rsplit(":", 2)[0]
    assert info.value.message == ("copy(): parameter 'x' is annotated pl.Tensor[[M, 16], pl.FP32] but was passed a "
                                  "tensor of shape [8, 32] and dtype FP32")
    assert info.value.location == f"{path}:15:15"
    assert info.value.hint == f"its parameter is declared at {path}:10:23"


def test_a_kernel_nobody_calls_cannot_have_dynamic_dimensions(write_dsl):
    source = DYN + '''@pl.program
class Unbound:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [M, 16]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        return x
'''
    with pytest.raises(ParserTypeError) as info:
        write_dsl("unbound", source)
    assert info.value.message == ("function 'copy' has the dynamic dimension 'M' in its parameters, but no function "
                                  "calls it, so nothing gives it an extent")
    assert info.value.location.endswith("unbound.py:10:5")


def test_a_dynamic_dimension_outside_a_parameter_has_no_extent(write_dsl):
    source = DYN + '''@pl.program
class Local:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[M, 16], pl.FP32]:
        return x
'''
    with pytest.raises(ParserTypeError) as info:
        write_dsl("local", source)
    assert info.value.message.startswith("the dynamic dimension 'M' has no extent here")
    assert info.value.location.endswith("local.py:10:66")


# Each parameter's dimension is its own tensor's extent: M is rows * cols for the flat inputs and rows
# for the output, and the return annotation is matched against the value returned.
FLAT_INPUTS = DYN + '''@pl.program
class FlatAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N])), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M], pl.FP32], b: pl.Tensor[[M], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, RETURNED_COLS], pl.FP32]:
        c = self.add(pl.reshape(a, [ROWS, COLS]), pl.reshape(b, [ROWS, COLS]), c)
        return c
'''


def test_parameters_may_give_a_shared_dimension_different_extents(write_dsl):
    module, _ = write_dsl("flat_add", "ROWS = 8\nCOLS = 32\n" + FLAT_INPUTS.replace("RETURNED_COLS", "N"))
    a, b, c = torch.randn(256), torch.randn(256), torch.zeros(8, 32)
    pypto.runtime.run(module.FlatAdd, a, b, c)
    torch.testing.assert_close(c, (a + b).reshape(8, 32))


def test_a_returned_value_must_fit_the_return_annotation(write_dsl):
    module, path = write_dsl("flat_add_bad", "ROWS = 8\nCOLS = 32\n" + FLAT_INPUTS.replace("RETURNED_COLS", "16"))
    with pytest.raises(ParserTypeError) as info:
        module.FlatAdd.specialise(torch.zeros(256), torch.zeros(256), torch.zeros(8, 32))
    assert info.value.message == ("function 'main' returns pl.Tensor[[8, 32], pl.FP32] where it declares "
                                  "pl.Tensor[[M, 16], pl.FP32]")
    assert info.value.location == f"{path}:20:9"


def test_an_annotation_may_name_only_values_known_at_compile_time(write_dsl):
    source = DYN + '''@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        for i in pl.range(M):
            t: pl.Tile[[i, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [i, 0], [1, 16])
            out = pl.store(t, [i, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        out = self.copy(x, out)
        return out
'''
    module, path = write_dsl("rows", source)
    with pytest.raises(ParserTypeError) as info:
        module.Rows.specialise(torch.zeros(4, 16), torch.zeros(4, 16))
    assert info.value.message == "dimension 'i' is not known at compile time"
    assert info.value.location == f"{path}:12:25"


# A dimension written as a multiple of a dynamic one (upstream's test_composite_shape_dim): M is the
# passed extent divided by two, and the body reads that M.
COMPOSITE = DYN + '''@pl.program
class Doubled:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[M * 2, N], pl.FP32], b: pl.Tensor[[2 * M, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]) -> pl.Tensor[[M * 2, N], pl.FP32]:
        top = pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N]))
        c = pl.store(top, [0, 0], c)
        bottom = pl.sub(pl.load(a, [M, 0], [M, N]), pl.load(b, [M, 0], [M, N]))
        c = pl.store(bottom, [M, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M * 2, N], pl.FP32], b: pl.Tensor[[M * 2, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]) -> pl.Tensor[[M * 2, N], pl.FP32]:
        c = self.add(a, b, c)
        return c
'''


def test_a_dimension_may_be_a_multiple_of_a_dynamic_one(write_dsl):
    module, _ = write_dsl("composite", COMPOSITE)
    a, b, c = torch.randn(16, 32), torch.randn(16, 32), torch.zeros(16, 32)
    pypto.runtime.run(module.Doubled, a, b, c)
    torch.testing.assert_close(c, torch.cat([a[:8] + b[:8], a[8:] - b[8:]]))


def test_an_extent_no_value_of_the_dynamic_dimension_gives_is_an_error(write_dsl):
    module, path = write_dsl("composite_odd", COMPOSITE)
    with pytest.raises(ParserTypeError) as info:
        module.Doubled.specialise(torch.zeros(15, 32), torch.zeros(15, 32), torch.zeros(15, 32))
    assert info.value.message == "parameter 'a' has the dimension M * 2, which no extent of 'M' makes 15"
    assert info.value.location == f"{path}:19:34"
