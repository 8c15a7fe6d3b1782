"""Mistakes in kernels are reported at their place in the user's file."""

import pytest
import torch

from pypto.language.parser import InvalidOperationError, ParserTypeError, ResourceError, UndefinedVariableError
from pypto.runtime import RunConfig

KERNEL = """
import pypto.language as pl


@pl.jit
def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 32])
        tb = pl.load(b, [0, 0], [32, 32])
        tc = {op}(ta, tb)
        pl.store(tc, [0, 0], c)
    return c
"""


def _args(shape=(32, 32)):
    return torch.ones(shape), torch.ones(shape), torch.empty(shape)


def test_unknown_op_is_reported_with_file_line_col(write_kernel):
    module, path = write_kernel("unknown_op", KERNEL.format(op="pl.frobnicate"))
    with pytest.raises(InvalidOperationError) as info:
        module.kernel(*_args())
    error = info.value
    assert error.message == "unknown operation 'pl.frobnicate'"
    assert error.location == f"{path}:10:14"
    assert str(error) == (
        "error: unknown operation 'pl.frobnicate'\n"
        f"  --> {path}:10:14\n"
        "   |\n"
        "10 |         tc = pl.frobnicate(ta, tb)\n"
        "   |              ^^^^^^^^^^^^^"
    )


def test_indented_kernels_keep_real_columns(write_kernel):
    source = "def make():\n" + "".join("    " + line + "\n" for line in KERNEL.format(op="pl.nope").splitlines())
    source += "    return kernel\n"
    module, path = write_kernel("nested", source)
    with pytest.raises(InvalidOperationError) as info:
        module.make()(*_args())
    assert info.value.location == f"{path}:11:18"


def test_undefined_name(write_kernel):
    module, path = write_kernel("undefined", KERNEL.format(op="pl.add").replace("(ta, tb)", "(ta, tz)"))
    with pytest.raises(UndefinedVariableError) as info:
        module.kernel(*_args())
    assert info.value.message == "name 'tz' is not defined"
    assert info.value.location == f"{path}:10:25"


def test_a_call_with_the_wrong_shape_is_a_type_error_at_the_load(write_kernel):
    module, path = write_kernel("small", KERNEL.format(op="pl.add"))
    with pytest.raises(ParserTypeError) as info:
        module.kernel(*_args((16, 32)))
    assert info.value.message == (
        "pl.load: region at offsets [0, 0] with shape [32, 32] is outside tensor pl.Tensor[[16, 32], pl.FP32] "
        "(dimension 0)"
    )
    assert info.value.location == f"{path}:8:14"


def test_a_kernel_too_large_for_ub_names_the_tile(write_kernel):
    source = KERNEL.format(op="pl.add").replace("[32, 32]", "[256, 96]")
    module, path = write_kernel("large", source)
    with pytest.raises(ResourceError) as info:
        module.kernel(*_args((256, 96)))
    assert info.value.message == (
        f"kernel 'kernel_incore_0' (from {path}:7:5) does not fit in UB (Vec): tile 'tb' "
        "(pl.Tile[[256, 96], pl.FP32, pl.Mem.Vec]) needs 98304 bytes while 98304 bytes are in use, "
        "and Ascend910B has 188416 bytes"
    )
    assert info.value.location == f"{path}:9:9"
    # The same kernel fits the larger UB of the a5.
    module.kernel(*_args((256, 96)), config=RunConfig(platform="a5sim"))


MATMUL_KERNEL = """
import pypto.language as pl


@pl.jit
def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [{m}, {k}], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [0, 0], [{k}, {n}], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        acc = pl.matmul_acc(acc, pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c
"""


# A left operand the kernel extracts into L0A itself is placed by the kernel: AutoTileMatmulL0 leaves
# it whole.
EXTRACTED_LEFT_KERNEL = """
import pypto.language as pl


@pl.jit
def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [{m}, {k}], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [0, 0], [{k}, {n}], target_memory=pl.MemorySpace.Mat)
        a_l = pl.tile.extract(a1, 0, 0, [{m}, {k}], target_memory=pl.Mem.Left)
        pl.store(pl.matmul(a_l, pl.move(b1, target_memory=pl.Mem.Right)), [0, 0], c)
    return c
"""


# The first product is read by matmul_acc, so it keeps its [M, N] (AutoTileMatmulL0 splits only its K):
# a result beyond L0C is left to allocation to report.
def _matmul_resource_error(write_kernel, name, m, k, n, platform="a2a3sim", kernel=MATMUL_KERNEL):
    module, path = write_kernel(name, kernel.format(m=m, k=k, n=n))
    with pytest.raises(ResourceError) as info:
        module.kernel(torch.ones(m, k), torch.ones(k, n), torch.empty(m, n), config=RunConfig(platform=platform))
    return info.value, path


def test_operands_too_large_for_l1_name_the_second_load(write_kernel):
    # a1 alone fills the 512 KB of L1, so b1 finds no room.
    error, path = _matmul_resource_error(write_kernel, "l1", 256, 512, 16)
    assert error.message == (
        f"kernel 'kernel_incore_0' (from {path}:7:5) does not fit in L1 (Mat): tile 'b1' "
        "(pl.Tile[[512, 16], pl.FP32, pl.Mem.Mat]) needs 32768 bytes while 524288 bytes are in use, "
        "and Ascend910B has 524288 bytes"
    )
    assert error.location == f"{path}:9:9"


def test_a_result_too_large_for_l0c_names_the_accumulator(write_kernel):
    # Operands of 16 KB each fit L1, L0A and L0B; the 256x256 f32 result (256 KB) exceeds the 128 KB L0C.
    error, path = _matmul_resource_error(write_kernel, "l0c", 256, 16, 256)
    assert error.message == (
        f"kernel 'kernel_incore_0' (from {path}:7:5) does not fit in L0C (Acc): tile 'acc' "
        "(pl.Tile[[256, 256], pl.FP32, pl.Mem.Acc]) needs 262144 bytes while 0 bytes are in use, "
        "and Ascend910B has 131072 bytes"
    )
    assert error.location == f"{path}:10:9"


def test_a_left_operand_too_large_for_l0a(write_kernel):
    # 128x256 f32 is 128 KB: it fits L1 but not the 64 KB of L0A.
    error, path = _matmul_resource_error(write_kernel, "l0a", 128, 256, 16, platform="a5sim",
                                         kernel=EXTRACTED_LEFT_KERNEL)
    assert error.message.startswith(f"kernel 'kernel_incore_0' (from {path}:7:5) does not fit in L0A (Left): "
                                    "tile 'a_l' ")
    assert "needs 131072 bytes while 0 bytes are in use, and Ascend950 has 65536 bytes" in error.message


# A bias row the kernel moved into Bias itself and adds to two products is read whole by both:
# AutoTileMatmulL0 cannot load it in windows, so a row wider than the Bias buffer stays an error.
SHARED_BIAS_KERNEL = """
import pypto.language as pl


@pl.jit
def kernel(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        b1 = pl.load(b, [0, 0], [32, 512], target_memory=pl.Mem.Mat)
        row = pl.tile.move(pl.load(bias, [0, 0], [1, 512], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Bias)
        first = pl.tile.matmul_bias(a1, b1, row)
        second = pl.tile.matmul_bias(a1, b1, row)
        pl.store(first, [0, 0], c)
        pl.store(second, [16, 0], c)
    return c
"""


def test_a_bias_row_read_whole_and_too_wide_for_bias_names_the_row(write_kernel):
    module, path = write_kernel("bias_bt", SHARED_BIAS_KERNEL)
    with pytest.raises(ResourceError) as info:
        module.kernel(torch.ones(16, 32), torch.ones(32, 512), torch.ones(1, 512), torch.empty(32, 512))
    assert info.value.message == (
        f"kernel 'kernel_incore_0' (from {path}:7:5) does not fit in BT (Bias): tile 'row' "
        "(pl.Tile[[1, 512], pl.FP32, pl.Mem.Bias]) needs 2048 bytes while 0 bytes are in use, "
        "and Ascend910B has 1024 bytes"
    )
    assert info.value.location == f"{path}:10:9"


def test_unknown_run_config_fields_are_rejected():
    with pytest.raises(TypeError, match="unexpected keyword argument 'platfrom'"):
        RunConfig(platfrom="a2a3sim")
    with pytest.raises(ValueError, match="RunConfig.platform must be one of a2a3sim, a2a3, a5sim, a5, got 'tpu'"):
        RunConfig(platform="tpu")


def test_non_tensor_arguments_are_refused(write_kernel):
    module, _ = write_kernel("numpy_arg", KERNEL.format(op="pl.add"))
    import numpy as np

    with pytest.raises(TypeError, match="argument 'a' must be a torch.Tensor or a Python int, float or bool, got ndarray"):
        module.kernel(np.ones((32, 32)), torch.ones(32, 32), torch.empty(32, 32))


def test_unsupported_function_forms_say_so_at_use():
    import pypto.language as pl

    decorated = pl.jit.opaque(lambda: None)  # decorating is fine: model files do it at import
    with pytest.raises(NotImplementedError, match="@pl.jit.opaque functions are not supported by this pypto yet"):
        decorated()
    with pytest.raises(TypeError, match="pl.jit got unexpected option"):
        pl.jit(level=1)


PAST_THE_END = """
import pypto.language as pl


@pl.jit
def kernel(x: pl.Tensor[[8, 64], pl.FP32], y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    for task in pl.spmd(1):
        t0 = task * 16
        rows = {window}
        pl.store(pl.mul(rows, 2.0), [t0, 0], y)
    return y
"""


def test_a_window_reaching_past_the_tensor_says_how_to_read_only_what_lies_in_it(write_kernel):
    """A 16-row window of an 8-row tensor would read 8 rows that are not the tensor's (upstream moves
    the whole window; hc_head.py:79 does this): an error, whose help is the valid_shape that fixes it."""
    module, path = write_kernel("past_end", PAST_THE_END.format(window="x[t0 : t0 + 16, 0:64]"))
    with pytest.raises(ParserTypeError) as info:
        module.kernel(torch.ones(8, 64), torch.empty(8, 64))
    assert info.value.message == (
        "region at offsets [?, 0] with shape [16, 64] is outside tensor pl.Tensor[[8, 64], pl.FP32] (dimension 0)"
    )
    assert info.value.location == f"{path}:9:16"
    assert info.value.hint == (
        "only a tile's valid region is read: to read the part of the window that lies in the tensor, give it as "
        "valid_shape=[pl.min(16, 8 - offset), 64] (pl.slice(tensor, shape, offsets, valid_shape=...) or "
        "pl.load(..., valid_shape=...)); the rest of the tile is then undefined"
    )

    # The fix the help names reads the 8 rows there are.
    fixed, _ = write_kernel("past_end_fixed", PAST_THE_END.format(
        window="pl.slice(x, [16, 64], [t0, 0], valid_shape=[pl.min(16, 8 - t0), 64])"))
    x, y = torch.randn(8, 64), torch.empty(8, 64)
    fixed.kernel(x, y)
    assert torch.equal(y, x * 2)
