"""``pypto.testing``: check a kernel against a reference in one call.

    from pypto.testing import TensorSpec, run
    result = run(my_kernel, [TensorSpec("x", [128, 128], torch.float32, init_value=torch.randn),
                             TensorSpec("y", [128, 128], torch.float32)],
                 golden=lambda v: v["y"].copy_(torch.exp(v["x"])))
    assert result.passed, result.error
"""

from pypto.testing.compare import allclose, ratio_allclose, topk_pair_compare
from pypto.testing.runner import RunResult, run
from pypto.testing.spec import ScalarSpec, TensorSpec

__all__ = ["TensorSpec", "ScalarSpec", "run", "RunResult", "allclose", "ratio_allclose", "topk_pair_compare"]
