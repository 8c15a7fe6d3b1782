"""What a run on a device platform (a2a3, a5) reports on a machine that cannot do it.

Compiling for a device always writes the build directory; the ascend plugin then runs ptoas and
ccec where it finds them. Running needs an Ascend NPU, which this pypto does not drive. The error
says which, and a script that dies of it exits with a documented status, so that a CI job can tell
"the toolchain is missing" from "the artifacts are complete" from a failing program:

* ``EXIT_DEVICE_TOOLCHAIN_MISSING`` (3): the artifacts were written, but ptoas, ccec or the kernel
  headers were not found, so the device build stopped there (``device_build.json`` lists both);
* ``EXIT_NO_DEVICE`` (4): the device build is complete, and there is no NPU to run it on here.
"""

import sys

EXIT_DEVICE_TOOLCHAIN_MISSING = 3
EXIT_NO_DEVICE = 4


class DeviceUnavailableError(RuntimeError):
    """A run on a device platform that this machine cannot do; ``exit_code`` is one of the above."""

    def __init__(self, message: str, exit_code: int = EXIT_NO_DEVICE):
        super().__init__(message)
        self.exit_code = exit_code


def _exit_with_code_hook(previous):
    def hook(kind, value, traceback):
        if not isinstance(value, DeviceUnavailableError):
            return previous(kind, value, traceback)
        # The message is the whole story (what was written, what is missing); no traceback.
        sys.stderr.write(f"pypto: {value}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        import os

        os._exit(value.exit_code)

    return hook


def install_exit_code_hook() -> None:
    """An uncaught DeviceUnavailableError ends the process with its exit code (Python would exit
    with 1). Installed on import of pypto; a hook the program set itself is left alone."""
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _exit_with_code_hook(sys.excepthook)
