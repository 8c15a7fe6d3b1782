"""The PTO dialect check of every module a test writes (tools/pto-check).

`assert_conforms(directory)` checks each kernels/*/*.pto under `directory`, and the .generic.mlir next
to it, against the op table transcribed from PTOAS: op names, operand and result counts and types,
attributes. The conftest runs it after every test on the test's temporary directory, so every .pto
the suite writes is checked; the backend's known divergences (pto_check.KNOWN_DIVERGENCES, each with
its reason) are not failures.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "pto-check"))
import pto_check  # noqa: E402


def problems_under(directory) -> list:
    """pto-check's problems in the modules under `directory`, known divergences left out."""
    if not any(Path(directory).rglob("kernels/*/*.pto")):
        return []
    report = pto_check.check_paths([directory])
    return [problem for problem in report.problems if not pto_check.known_divergence(problem)]


def assert_conforms(directory) -> None:
    problems = problems_under(directory)
    assert not problems, "modules that do not conform to the PTO dialect:\n" + "\n".join(map(str, problems))
