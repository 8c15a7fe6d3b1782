"""Distributed (L3) programs: a @pl.jit.host function dispatching @pl.jit chip entries to ranks, with
window buffers, on the simulator."""

import json

import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.language.parser.diagnostics import ParserError
from pypto.runtime import RunConfig

from conftest import kernels_fixture

SOURCE = '''
import pypto.language as pl
import pypto.language.distributed as pld

R = 8
C = 16


@pl.jit.incore
def affine(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]], k: pl.Scalar[pl.FP32]):
    t = pl.load(x, [0, 0], [R, C])
    y = pl.store(pl.add(pl.mul(t, 2.0), k), [0, 0], y)
    return y


@pl.jit
def chip_affine(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]], k: pl.Scalar[pl.FP32]):
    return affine(x, y, k)


@pl.jit.host
def host_affine(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], r * 10 + 1.0, device=r)


@pl.jit.incore
def stash(x: pl.Tensor[[R, C], pl.FP32], w: pl.InOut[pld.DistributedTensor[[R, C], pl.FP32]]):
    t = pl.load(x, [0, 0], [R, C])
    w = pl.store(pl.exp(t), [0, 0], w)
    return w


@pl.jit.incore
def unstash(w: pld.DistributedTensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    t = pl.load(w, [0, 0], [R, C])
    y = pl.store(pl.add(t, 1.0), [0, 0], y)
    return y


@pl.jit
def chip_stash(x: pl.Tensor[[R, C], pl.FP32], w: pl.InOut[pld.DistributedTensor[[R, C], pl.FP32]]):
    return stash(x, w)


@pl.jit
def chip_unstash(w: pld.DistributedTensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    return unstash(w, y)


@pl.jit.host
def host_two_steps(x: pl.Tensor[[2, R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, 2, C], pl.FP32]]):
    scratch = pld.alloc_window_buffer(4096)
    for r in pl.range(pld.world_size()):
        w = pld.window(scratch, [R, C], dtype=pl.FP32)
        chip_stash(x[r], w, device=r)
        chip_unstash(w, y[:, r], device=r)


@pl.jit.host
def host_too_many(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(3):
        chip_affine(x[r], y[r], r * 1.0, device=r)


@pl.jit.host
def host_first_rank_only(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    chip_affine(x[0], y[0], 0.0, device=0)


@pl.jit.host
def host_small_window(x: pl.Tensor[[2, R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, 2, C], pl.FP32]]):
    scratch = pld.alloc_window_buffer([R, 8], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        w = pld.window(scratch, [R, C], dtype=pl.FP32)
        chip_stash(x[r], w, device=r)


@pl.jit.host
def host_computes(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    t = pl.load(x, [0, 0, 0], [1, R, C])


@pl.jit.host
def host_no_device(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], r)


@pl.jit.host
def host_typed_constant(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], pl.const(r * 2, pl.FP32), device=r)


@pl.jit.host
def host_casts(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        k = pl.cast(pl.cast(r * 2.75 - 1.5, pl.INT32) * 100 + pl.cast(r + 126, pl.INT8), pl.FP32)
        chip_affine(x[r], y[r], k, device=r)


@pl.jit.host
def host_casts_a_tensor(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(pl.cast(x[r], pl.BF16), y[r], 1.0, device=r)


B = pl.dynamic("B")


@pl.jit.host
def host_binds_dynamic(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    x.bind_dynamic(0, B)
    y.bind_dynamic(0, B)
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], r * 10 + 1.0, device=r)


@pl.jit.host
def host_binds_dynamic_twice(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    x.bind_dynamic(0, B)
    y.bind_dynamic(1, B)
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], r * 10 + 1.0, device=r)


@pl.jit.host
def host_returns_its_output(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], r * 10 + 1.0, device=r)
    return y


@pl.jit.host
def host_returns_a_number(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], r * 10 + 1.0, device=r)
    return 3


@pl.jit.host
def host_bad_constant(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_affine(x[r], y[r], pl.const(1.5, pl.INT32), device=r)


@pl.jit.incore
def mark_first_row(x: pl.Tensor[[R, C], pl.FP32], w: pl.Out[pld.DistributedTensor[[R, C], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, C])
    w = pl.store(t, [0, 0], w)
    return w


@pl.jit
def chip_mark(x: pl.Tensor[[R, C], pl.FP32], w: pl.Out[pld.DistributedTensor[[R, C], pl.FP32]]):
    return mark_first_row(x, w)


@pl.jit.host
def host_partial_window(x: pl.Tensor[[2, R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, 2, C], pl.FP32]]):
    scratch = pld.alloc_window_buffer(4096)
    for r in pl.range(pld.world_size()):
        w = pld.window(scratch, [R, C], dtype=pl.FP32)
        chip_mark(x[r], w, device=r)
        chip_unstash(w, y[:, r], device=r)
'''

kernels = kernels_fixture("distributed_host_kernels.py", SOURCE)


def line_of(text: str, occurrence: int = 1) -> int:
    """The line of the kernels file holding `text` (its `occurrence`-th time)."""
    lines = [i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line]
    return lines[occurrence - 1]


def world(n: int, platform: str = "a2a3sim") -> RunConfig:
    return RunConfig(platform=platform, distributed_config=DistributedConfig(device_ids=list(range(n))))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_each_rank_runs_its_dispatch_with_its_scalar(kernels, platform):
    torch.manual_seed(3)
    x = torch.randn(3, 8, 16)
    y = torch.full((3, 8, 16), float("nan"))
    compiled = kernels.host_affine.compile(x, y, config=world(3, platform))
    assert isinstance(compiled, DistributedCompiledProgram) and compiled.world_size == 3
    compiled(x, y, config=RunConfig(platform=platform))
    expected = x * 2 + torch.tensor([1.0, 11.0, 21.0]).view(3, 1, 1)
    torch.testing.assert_close(y, expected, rtol=1e-6, atol=1e-6)


def test_calling_the_host_function_compiles_and_runs(kernels):
    x = torch.ones(3, 8, 16)
    y = torch.zeros(3, 8, 16)
    kernels.host_affine(x, y, config=world(3))
    assert torch.equal(y[:, 0, 0], torch.tensor([3.0, 13.0, 23.0]))


def test_window_holds_what_an_earlier_dispatch_of_the_rank_stored(kernels):
    torch.manual_seed(4)
    x = torch.randn(2, 8, 16)
    y = torch.zeros(8, 2, 16)  # rank r writes the column block y[:, r], a strided view
    compiled = kernels.host_two_steps.compile(x, y, config=world(2))
    compiled(x, y)
    torch.testing.assert_close(y, (torch.exp(x) + 1).transpose(0, 1), rtol=1e-6, atol=1e-6)
    # One chip program per entry, shared by both ranks (each runs it on a session of its own).
    first, second, third, fourth = compiled.chip_programs
    assert first is third and second is fourth and first is not second


def test_build_directory_records_the_plan(kernels):
    x, y = torch.zeros(2, 8, 16), torch.zeros(8, 2, 16)
    compiled = kernels.host_two_steps.compile(x, y, config=world(2))
    plan = json.loads((compiled.output_dir / "distributed_plan.json").read_text())
    assert plan["world_size"] == 2 and plan["device_ids"] == [0, 1]
    assert plan["windows"] == [{"name": "scratch", "bytes": 4096, "offset": 0}]
    assert [(d["rank"], d["entry"], d["chip_build"]) for d in plan["dispatches"]] == [
        (0, "chip_stash", "next_levels/chip_stash"),
        (0, "chip_unstash", "next_levels/chip_unstash"),
        (1, "chip_stash", "next_levels/chip_stash"),
        (1, "chip_unstash", "next_levels/chip_unstash"),
    ]
    assert plan["dispatches"][3]["args"][1] == {"host_tensor": "y[:, 1]", "shape": [8, 16], "dtype": "FP32"}
    assert (compiled.output_dir / "next_levels" / "chip_stash" / "lowered_program.py").exists()


def test_default_world_is_one_rank_on_device_0(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    compiled = kernels.host_affine.compile(x, y)
    assert compiled.distributed_config.device_ids == [0] and compiled.world_size == 1
    compiled(x, y)
    assert torch.equal(y[0], torch.full((8, 16), 3.0)) and not y[1:].any()


def test_dispatch_to_a_rank_outside_the_world_is_an_error(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    with pytest.raises(ParserError) as error:
        kernels.host_too_many.compile(x, y, config=world(2))
    assert error.value.message == "device=2 is not a rank of this program: the world has 2 rank(s), 0 to 1"
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('chip_affine(x[r], y[r], r * 1.0, device=r)')}:9")
    assert "DistributedConfig.device_ids" in error.value.hint


def test_rank_without_a_dispatch_is_an_error(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    with pytest.raises(ParserError) as error:
        kernels.host_first_rank_only.compile(x, y, config=world(3))
    assert error.value.message == (
        "host_first_rank_only dispatches nothing to rank(s) 1, 2 of its 3-rank world "
        "(DistributedConfig.device_ids=[0, 1, 2])"
    )
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('def host_first_rank_only') - 1}:1")


def test_window_larger_than_its_buffer_is_an_error(kernels):
    x, y = torch.ones(2, 8, 16), torch.zeros(8, 2, 16)
    with pytest.raises(ParserError) as error:
        kernels.host_small_window.compile(x, y, config=world(2))
    assert error.value.message == "the window [8, 16] FP32 takes 512 bytes, but its buffer 'scratch' holds 256"
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('w = pld.window(scratch, [R, C]', 2)}:13")
    assert f"distributed_host_kernels.py:{line_of('scratch = pld.alloc_window_buffer([R, 8]')}:15" in error.value.hint


def test_tensor_ops_in_the_host_function_are_refused(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    with pytest.raises(ParserError) as error:
        kernels.host_computes.compile(x, y, config=world(1))
    assert error.value.message == "'pl.load' cannot be used in a @pl.jit.host function"
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('t = pl.load(x, [0, 0, 0]')}:9")


def test_dispatch_without_device_is_an_error(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    with pytest.raises(ParserError) as error:
        kernels.host_no_device.compile(x, y, config=world(3))
    assert error.value.message == "the dispatch of chip_affine needs device=r, the rank it runs on"
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('chip_affine(x[r], y[r], r)')}:9")


def test_call_with_other_shapes_is_refused(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    compiled = kernels.host_affine.compile(x, y, config=world(3))
    with pytest.raises(ValueError, match=r"argument 'x' is a \[3, 8, 8\] FP32 tensor, but the program was compiled"):
        compiled(torch.ones(3, 8, 8), y)


def test_distributed_config_checks_its_devices():
    with pytest.raises(ValueError, match="has a device twice"):
        DistributedConfig(device_ids=[0, 0])
    with pytest.raises(ValueError, match="must not be empty"):
        DistributedConfig(device_ids=[])
    assert DistributedConfig().device_ids == [0]


def test_a_prepared_worker_runs_with_resident_tensors(kernels):
    """pypto-lib's golden harness keeps weights on the devices: `with compiled.prepare() as rt`, a
    stacked resident tensor (shard r on rank r) passed in place of a host tensor."""
    from pypto.ir import ParamDirection
    from pypto.runtime import StackedDeviceTensor

    torch.manual_seed(5)
    x = torch.randn(3, 8, 16)
    y = torch.zeros(3, 8, 16)
    compiled = kernels.host_affine.compile(x, y, config=world(3))
    params, _, _ = compiled._get_metadata()
    assert [(p.name, p.direction) for p in params] == [("x", ParamDirection.In), ("y", ParamDirection.Out)]
    with compiled.prepare() as rt:
        resident_x = rt.alloc_stacked_tensor(x)
        resident_y = StackedDeviceTensor([rt.alloc_tensor((8, 16), torch.float32, worker_id=r) for r in range(3)],
                                         (3, 8, 16), (0, 1, 2))
        rt(resident_x, resident_y)
        rt.copy_stacked_from(resident_y, y)
        rt.free_stacked_tensor(resident_x)
        with pytest.raises(ValueError, match="a resident tensor was used after free_tensor"):
            rt(resident_x, resident_y)
    torch.testing.assert_close(y, x * 2 + torch.tensor([1.0, 11.0, 21.0]).view(3, 1, 1), rtol=1e-6, atol=1e-6)


def test_a_stacked_upload_is_a_copy_and_its_shards_are_written_in_place(kernels):
    """alloc_stacked_tensor copies the host tensor once (later host writes do not reach the device)
    and a call passes that copy in place, so a stacked output reads back through its shards."""
    torch.manual_seed(6)
    x = torch.randn(3, 8, 16)
    expected = x * 2 + torch.tensor([1.0, 11.0, 21.0]).view(3, 1, 1)
    compiled = kernels.host_affine.compile(x, torch.zeros(3, 8, 16), config=world(3))
    with compiled.prepare() as rt:
        resident_x = rt.alloc_stacked_tensor(x)
        resident_y = rt.alloc_stacked_tensor(torch.zeros(3, 8, 16))
        x.add_(100.0)
        rt(resident_x, resident_y)
        y = torch.zeros(3, 8, 16)
        rt.copy_stacked_from(resident_y, y)
        torch.testing.assert_close(y, expected, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(resident_y.shards[2].tensor, expected[2], rtol=1e-6, atol=1e-6)


def test_a_typed_constant_is_a_number_passed_to_the_chip_entry(kernels):
    x, y = torch.ones(3, 8, 16), torch.zeros(3, 8, 16)
    kernels.host_typed_constant(x, y, config=world(3))
    assert torch.equal(y[:, 0, 0], torch.tensor([2.0, 4.0, 6.0]))
    with pytest.raises(ParserError) as error:
        kernels.host_bad_constant.compile(x, y, config=world(3))
    assert error.value.message == "pl.const(1.5, pl.INT32) is not an integer"
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('pl.const(1.5, pl.INT32)')}:42")


def test_a_cast_number_is_passed_to_the_chip_entry_as_upstream_casts_it(kernels):
    # Toward zero from a float, wrapping to an integer's width, as torch's casts do too.
    x, y = torch.randn(3, 8, 16), torch.zeros(3, 8, 16)
    kernels.host_casts(x, y, config=world(3))
    r = torch.arange(3)
    k = (r * 2.75 - 1.5).to(torch.int32) * 100 + (r + 126).to(torch.int8)
    torch.testing.assert_close(y, x * 2 + k.to(torch.float32).view(3, 1, 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(ParserError) as error:
        kernels.host_casts_a_tensor.compile(x, y, config=world(3))
    assert error.value.message == "pl.cast of the tensor x[r] cannot be used in a @pl.jit.host function"
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('pl.cast(x[r], pl.BF16)')}:21")


def test_bind_dynamic_in_a_host_function_checks_the_extents_it_binds(kernels):
    # pypto-lib's distributed layers bind their token axis in the host function too.
    x = torch.randn(3, 8, 16)
    y = torch.full((3, 8, 16), float("nan"))
    kernels.host_binds_dynamic(x, y, config=world(3))
    torch.testing.assert_close(y, x * 2 + torch.tensor([1.0, 11.0, 21.0]).view(3, 1, 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(ParserError) as error:
        kernels.host_binds_dynamic_twice.compile(x, y, config=world(3))
    first = line_of("x.bind_dynamic(0, B)", 2)
    assert error.value.message == (
        f"y has extent 8 on axis 1, but x bound pl.dynamic 'B' to 3 at "
        f"{error.value.location.rsplit(':', 3)[0]}:{first}:5")
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('y.bind_dynamic(1, B)')}:5")


def test_a_dispatch_writing_part_of_a_window_leaves_the_rest_as_the_window_started(kernels):
    # Windows start zeroed (signals count up from 0 in them); a dispatch is a launch inside the
    # distributed program, so its pl.Out window is not poisoned as a host tensor would be.
    x = torch.randn(2, 8, 16)
    y = torch.full((8, 2, 16), float("nan"))
    kernels.host_partial_window(x, y, config=world(2))
    for r in range(2):
        torch.testing.assert_close(y[0, r], x[r, 0] + 1.0)
        assert torch.equal(y[1:, r], torch.ones(7, 16))  # zero + 1.0


def test_a_host_function_may_return_its_output_parameter(kernels):
    x = torch.randn(3, 8, 16)
    y = torch.full((3, 8, 16), float("nan"))
    kernels.host_returns_its_output(x, y, config=world(3))
    torch.testing.assert_close(y, x * 2 + torch.tensor([1.0, 11.0, 21.0]).view(3, 1, 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(ParserError) as error:
        kernels.host_returns_a_number.compile(x, y, config=world(3))
    assert error.value.message == (
        "a @pl.jit.host function returns only its own tensor parameters (written in place), got 3")
    assert error.value.location.endswith(f"distributed_host_kernels.py:{line_of('return 3')}:5")
