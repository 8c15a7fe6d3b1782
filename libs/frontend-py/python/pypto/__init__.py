"""PyPTO: write tile kernels in Python, compile them with a C++ toolchain, run them on the simulator.

``import pypto.language as pl`` gives the DSL; ``pypto.runtime.RunConfig`` selects where it runs.
"""

from pypto import _core
from pypto._core import version as _version
from pypto.runtime.time_report import install as _install_time_report

_install_time_report(_core)  # PYPTO_TIME_REPORT: where the program's time goes (pypto/runtime/time_report.py)

__version__ = _version()

from pypto.runtime.device import install_exit_code_hook as _install_exit_code_hook

_install_exit_code_hook()

__all__ = ["__version__"]
