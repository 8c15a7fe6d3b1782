"""Running compiled PyPTO programs: the run configuration, compiled programs and build directories."""

from pypto.runtime.config import RunConfig
from pypto.runtime.compiled import CompiledProgram, Parameter, explain_abi, list_platforms
from pypto.runtime.build_dir import execute_compiled, load_compiled
from pypto.runtime.bench import benchmark
from pypto.runtime.program_run import run
from pypto.runtime.runner import DfxOptions
from pypto.runtime.device import EXIT_DEVICE_TOOLCHAIN_MISSING, EXIT_NO_DEVICE, DeviceUnavailableError
from pypto.runtime.resident import DeviceTensor, StackedDeviceTensor
from pypto.runtime.pto_isa import pto_isa_include_dir
from pypto.testing.spec import ScalarSpec, TensorSpec


def __getattr__(name: str):
    # PLATFORMS comes from the backend plugins, found on first use (pypto/runtime/platforms.py).
    if name == "PLATFORMS":
        from pypto.runtime import platforms

        return platforms.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "RunConfig", "run", "CompiledProgram", "Parameter", "PLATFORMS", "list_platforms", "execute_compiled",
    "load_compiled", "benchmark", "DfxOptions", "pto_isa_include_dir", "explain_abi", "DeviceUnavailableError",
    "EXIT_DEVICE_TOOLCHAIN_MISSING", "EXIT_NO_DEVICE", "TensorSpec", "ScalarSpec", "DeviceTensor",
    "StackedDeviceTensor",
]
