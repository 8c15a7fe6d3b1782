"""pytest plugin for re-hosted system tests: the ``--platform`` option and the ``test_runner``
fixture, whose ``run(case)`` runs a ``PTOTestCase`` through ``pypto.testing.run``."""

import dataclasses
from typing import Optional

import pytest


def pytest_addoption(parser):
    parser.addoption("--platform", default="a2a3sim", help="platform to run on (a2a3sim, a5sim, ...)")


def pytest_collection_modifyitems(config, items):
    """Runs only the cases parametrized for the chosen platform (or not parametrized by one)."""
    platform = config.getoption("--platform")
    kept, deselected = [], []
    for item in items:
        params = getattr(item, "callspec", None)
        chosen = params.params.get("platform", platform) if params else platform
        (kept if chosen == platform else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@dataclasses.dataclass
class CaseResult:
    passed: bool
    error: Optional[str] = None


class TestRunner:
    __test__ = False

    def __init__(self, platform: str):
        from pypto.runtime import RunConfig

        self.platform = platform
        self.config = RunConfig(platform=platform)  # cases read its profiling switches

    def run(self, case) -> CaseResult:
        import pypto.testing as testing

        specs, unchecked = [], []
        for spec in case.define_tensors():
            # Upstream's is_output=False means "not compared": a tensor the program writes as scratch
            # space may be marked so. The directions come from the compiled program either way.
            specs.append(testing.TensorSpec(spec.name, spec.shape, spec.dtype.torch_dtype,
                                            init_value=spec.init_value, is_output=spec.is_output or None))
            if not spec.is_output:
                unchecked.append(spec.name)
        for spec in case.define_scalars():
            specs.append(testing.ScalarSpec(spec.name, spec.dtype.torch_dtype, spec.value))

        def golden(values):
            case.compute_expected(values, None)

        result = testing.run(case.get_program(), specs, golden, platform=case.get_platform() or self.platform,
                             rtol=case.config.rtol, atol=case.config.atol, unchecked=unchecked)
        return CaseResult(result.passed, result.error)


@pytest.fixture(scope="session")
def test_config(request):
    """The RunConfig tests that call a jit function directly pass it (upstream's fixture of that name)."""
    from pypto.runtime import RunConfig

    return RunConfig(platform=request.config.getoption("--platform"))


@pytest.fixture(scope="session")
def test_runner(request):
    return TestRunner(request.config.getoption("--platform"))
