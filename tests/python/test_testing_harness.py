"""``pypto.testing``: specs, the compile-generate-golden-run-compare runner, and the comparators."""

import pytest
import torch

from pypto.testing import ScalarSpec, TensorSpec, allclose, ratio_allclose, run, topk_pair_compare

KERNELS = """
import pypto.language as pl


@pl.jit
def scale_add(x: pl.Tensor[[64, 64], pl.FP32], a: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for r in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 32, :] = pl.add(pl.mul(x[r : r + 32, :], 2.0), a)
    return y


@pl.jit
def top_half(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:32, :] = pl.exp(x[0:32, :])
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("testing_kernels", KERNELS)
    return module


def _specs(a=0.5):
    return [
        TensorSpec("x", [64, 64], torch.float32, init_value=torch.randn),
        ScalarSpec("a", torch.float32, a),
        TensorSpec("y", [64, 64], torch.float32),
    ]


def _golden(values):
    values["y"][:] = values["x"] * 2 + values["a"]


def test_a_correct_kernel_passes_and_outputs_come_from_the_compiled_directions(kernels, capsys):
    result = run(kernels.scale_add, _specs(), _golden)
    assert result.passed, result.error
    assert list(result.outputs) == ["y"]
    out = capsys.readouterr().out
    assert "[RUN] compile ..." in out and "'y' PASS shape=(64, 64) dtype=torch.float32" in out


def test_a_wrong_reference_fails_naming_the_output_and_the_first_positions(kernels):
    def wrong(values):
        values["y"][:] = values["x"] * 2 + values["a"]
        values["y"][3, 5] += 1.0

    result = run(kernels.scale_add, _specs(), wrong)
    assert not result.passed
    assert "y: 1 of 4096 elements differ" in result.error
    assert "at (3, 5)" in result.error


def test_specs_must_follow_the_parameters(kernels):
    specs = _specs()
    result = run(kernels.scale_add, [specs[0], specs[2], specs[1]], _golden)
    assert not result.passed
    assert "the program's parameters are ['x', 'a', 'y'] (in this order)" in result.error
    contradicting = [specs[0], specs[1], TensorSpec("y", [64, 64], torch.float32, is_output=False)]
    result = run(kernels.scale_add, contradicting, _golden)
    assert "'y': the spec says is_output=False, but the program writes it" in result.error
    wrong_dtype = [TensorSpec("x", [64, 64], torch.float16), specs[1], specs[2]]
    # The compiler checks the dtypes against the annotations, and points at the parameter (the
    # extents come from the tensors, as upstream's JIT specialises: test_jit_specialises_on_tensors.py).
    assert ("parameter 'x' is annotated pl.Tensor[[64, 64], pl.FP32] but was passed a tensor of shape [64, 64] "
            "and dtype FP16") in run(kernels.scale_add, wrong_dtype, _golden).error


def test_poisoned_outputs_expose_unwritten_elements(kernels):
    def golden(values):
        values["y"][0:32] = torch.exp(values["x"][0:32])

    specs = [TensorSpec("x", [64, 64], torch.float32, init_value=torch.randn), TensorSpec("y", [64, 64], torch.float32)]
    # Zero-initialised outputs would hide that the bottom half is never written; the NaN poison the
    # runtime fills them with by default does not.
    assert run(kernels.top_half, specs, golden, poison_outputs=False).passed
    result = run(kernels.top_half, specs, golden)
    assert not result.passed and "2048 of 4096 elements differ" in result.error
    tolerant = run(kernels.top_half, specs, golden, compare={"y": allclose(nan_ok=True)})
    assert tolerant.passed, tolerant.error


def test_unchecked_outputs_are_not_compared(kernels):
    def golden_without_y(values):
        pass  # y is scratch space here: the reference leaves it at its initial value

    assert not run(kernels.scale_add, _specs(), golden_without_y).passed
    result = run(kernels.scale_add, _specs(), golden_without_y, unchecked=["y"])
    assert result.passed, result.error
    assert list(result.outputs) == []
    assert "unchecked names ['z'], which are not parameters" in run(
        kernels.scale_add, _specs(), golden_without_y, unchecked=["z"]
    ).error


def test_compare_must_name_outputs(kernels):
    result = run(kernels.scale_add, _specs(), _golden, compare={"x": allclose()})
    assert "compare names ['x'], which are not outputs of the program (['y'])" in result.error


def test_tensor_spec_initial_values():
    assert torch.equal(TensorSpec("t", [2, 3], torch.float32).create(), torch.zeros(2, 3))
    assert torch.equal(TensorSpec("t", [2], torch.int32, init_value=7).create(), torch.tensor([7, 7], dtype=torch.int32))
    assert TensorSpec("t", [4, 4], torch.bfloat16, init_value=torch.randn).create().dtype == torch.bfloat16
    assert torch.equal(TensorSpec("t", [2], torch.float32, init_value=lambda: [1, 2]).create(), torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="init_value has shape \\(3,\\), the spec says \\(2,\\)"):
        TensorSpec("t", [2], torch.float32, init_value=torch.zeros(3)).create()
    assert ScalarSpec("s", torch.float16, 0.1).python_value() == torch.tensor(0.1, dtype=torch.float16).item()


def test_nan_in_the_reference_marks_dont_care_elements():
    # As upstream's harness reads it: the reference's NaN are elements the program may leave as it likes.
    expected = torch.tensor([[1.0, float("nan")], [float("nan"), 4.0]])
    ok, detail = allclose()(torch.tensor([[1.0, 0.0], [123.0, 4.0]]), expected)
    assert ok and detail == "2 elements the reference marks NaN (don't-care) not compared", detail
    ok, detail = allclose()(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), expected)
    assert not ok and "1 of 4 elements differ" in detail and "at (0, 0): got 2.0, expected 1.0" in detail, detail
    # A NaN the program computes where the reference has a number is still a difference.
    assert not allclose()(torch.tensor([[1.0, 0.0], [0.0, float("nan")]]), expected)[0]


def test_ratio_allclose_counts_bad_points_and_checks_the_tail():
    expected = torch.zeros(10, 10)
    actual = expected.clone()
    actual[0, :3] = 1.0  # 3% of the points are off
    assert ratio_allclose(atol=1e-3, rtol=0, max_error_ratio=0.05)(actual, expected)[0]
    ok, detail = ratio_allclose(atol=1e-3, rtol=0, max_error_ratio=0.02)(actual, expected)
    assert not ok and "error ratio 0.03000" in detail
    actual[0, 0] = float("nan")
    assert not ratio_allclose(atol=1e-3, rtol=0, max_error_ratio=0.02)(actual, expected)[0]
    tail = torch.zeros(10, 4)
    tail[8:] = 5.0
    assert ratio_allclose(valid_rows=8)(tail, torch.zeros(10, 4))[0]
    ok, detail = ratio_allclose(valid_rows=8, zero_tail=True)(tail, torch.zeros(10, 4))
    assert not ok and "8 elements beyond row 8 are not zero" in detail


def test_topk_pair_compare_accepts_ties_and_refuses_other_indices():
    scores = torch.tensor([[3.0, 5.0, 5.0, 1.0]])
    expected = torch.tensor([[1, 2]], dtype=torch.int32)
    compare = topk_pair_compare("scores")
    assert compare(torch.tensor([[2, 1]], dtype=torch.int32), expected, inputs={"scores": scores})[0]
    ok, detail = compare(torch.tensor([[1, 0]], dtype=torch.int32), expected, inputs={"scores": scores})
    assert not ok and "indices select different values" in detail
    ok, detail = compare(torch.tensor([[1, 9]], dtype=torch.int32), expected, inputs={"scores": scores})
    assert not ok and "indices outside [0, 4)" in detail
