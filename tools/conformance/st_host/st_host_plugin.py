"""pytest plugin for re-hosted system tests: the ``--platform`` option and the ``test_runner``
fixture, whose ``run(case)`` runs a ``PTOTestCase`` through ``pypto.testing.run``."""

import dataclasses
from typing import Optional

import pytest


def pytest_addoption(parser):
    parser.addoption("--platform", default="a2a3sim", help="platform to run on (a2a3sim, a5sim, ...)")
    parser.addoption("--onboard-on-sim", action="store_true",
                     help="also run the cases written for the device (a2a3, a5) on its simulator")


_SIMULATOR_OF = {"a2a3": "a2a3sim", "a5": "a5sim"}


def pytest_configure(config):
    _provide_memory_planner_names()


def _provide_memory_planner_names():
    """Some cases run once per upstream memory planner (``pypto.pypto_core.passes.MemoryPlanner``) and
    hand the choice to the harness. We have one planner, which the harness ignores the choice for, so
    the enum only has to exist for those cases to import."""
    import enum
    import sys
    import types

    try:
        import pypto.pypto_core.passes  # noqa: F401
        return
    except ImportError:
        pass
    core, passes = types.ModuleType("pypto.pypto_core"), types.ModuleType("pypto.pypto_core.passes")
    passes.MemoryPlanner = enum.Enum("MemoryPlanner", ["PYPTO", "DSA_RP", "PTOAS"])
    core.passes = passes
    sys.modules.update({"pypto.pypto_core": core, "pypto.pypto_core.passes": passes})


def _simulated(config, platform):
    """The platform a case parametrized for `platform` runs on: its simulator under --onboard-on-sim."""
    if platform and config.getoption("--onboard-on-sim"):
        return _SIMULATOR_OF.get(platform, platform)
    return platform


def pytest_collection_modifyitems(config, items):
    """Runs only the cases parametrized for the chosen platform (or not parametrized by one)."""
    platform = config.getoption("--platform")
    kept, deselected = [], []
    for item in items:
        params = getattr(item, "callspec", None)
        chosen = _simulated(config, params.params.get("platform", platform) if params else platform)
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

    def __init__(self, platform: str, onboard_on_sim: bool = False):
        from pypto.runtime import RunConfig

        self.platform = platform
        self.onboard_on_sim = onboard_on_sim
        self.config = RunConfig(platform=platform)  # cases read its profiling switches

    def run(self, case) -> CaseResult:
        import pypto.testing as testing

        program = case.get_program()
        tensors, scalars = case.define_tensors(), case.define_scalars()
        # Upstream's harness passes the tensors in the order the case defines them, whatever their
        # names; ours matches names, so a case naming them otherwise runs under the parameters' names.
        case_names = [spec.name for spec in [*tensors, *scalars]]
        names = _parameter_names(program)
        if names is None or len(names) != len(case_names):
            names = case_names
        as_case = dict(zip(names, case_names))
        specs, unchecked = [], []
        for name, spec in zip(names, tensors):
            # Upstream's is_output=False means "not compared": a tensor the program writes as scratch
            # space may be marked so. The directions come from the compiled program either way.
            specs.append(testing.TensorSpec(name, spec.shape, spec.dtype.torch_dtype,
                                            init_value=spec.init_value, is_output=spec.is_output or None))
            if not spec.is_output:
                unchecked.append(name)
        for name, spec in zip(names[len(tensors):], scalars):
            specs.append(testing.ScalarSpec(name, spec.dtype.torch_dtype, spec.value))

        def golden(values):
            by_case_name = {as_case.get(name, name): _signed_view(value) for name, value in values.items()}
            case.compute_expected(by_case_name, None)
            for name in list(values):  # an output the reference assigned rather than filled
                values[name] = _same_bits_as(by_case_name[as_case.get(name, name)], values[name])

        platform = case.get_platform() or self.platform
        if self.onboard_on_sim:
            platform = _SIMULATOR_OF.get(platform, platform)
        result = testing.run(program, specs, golden, platform=platform,
                             rtol=case.config.rtol, atol=case.config.atol, unchecked=unchecked)
        return CaseResult(result.passed, result.error)


def _signed_twins():
    import torch

    return {torch.uint16: torch.int16, torch.uint32: torch.int32}


def _signed_view(value):
    """Upstream's harness holds UINT16 and UINT32 data in int16 and int32 tensors (torch has few
    unsigned ops), so its references are written for those: they see the same bits as such."""
    import torch

    if isinstance(value, torch.Tensor) and value.dtype in _signed_twins():
        return value.view(_signed_twins()[value.dtype])
    return value


def _same_bits_as(value, original):
    """A reference's tensor back in the unsigned dtype of the tensor it stands for, when it came as the
    signed twin (`_signed_view`, or a new tensor the reference made)."""
    import torch

    if isinstance(value, torch.Tensor) and isinstance(original, torch.Tensor):
        if _signed_twins().get(original.dtype) == value.dtype:
            return value.view(original.dtype)
    return value


def _parameter_names(program):
    """The entry's parameter names of a @pl.program (parsed or waiting for its shapes); None otherwise."""
    if hasattr(program, "dynamic_dims"):
        return list(program.parameters)
    functions = getattr(program, "functions", None)
    if not isinstance(functions, dict):
        return None
    entry = next((f for f in functions.values() if f.name == program.entry_name), None)
    return [param["name"] for param in entry.params] if entry is not None else None


@pytest.fixture(scope="session")
def test_config(request):
    """The RunConfig tests that call a jit function directly pass it (upstream's fixture of that name)."""
    from pypto.runtime import RunConfig

    return RunConfig(platform=request.config.getoption("--platform"))


@pytest.fixture(scope="session")
def test_runner(request):
    return TestRunner(request.config.getoption("--platform"), request.config.getoption("--onboard-on-sim"))
