"""A stand-in for the system-test harness of upstream pypto (``tests/st/harness``), so that its test
cases run unmodified on this toolchain: each case's specs, program and reference are handed to
``pypto.testing.run``. Used by tools/conformance/run.py for the ``pytest`` convention."""
