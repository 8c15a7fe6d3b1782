"""``run(program, specs, golden)``: compile, make the inputs, compute the reference, run, compare.

The harness every test of a kernel repeats, once: each stage prints a ``[RUN]`` line, and the result
says which output failed and where."""

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from pypto.testing.compare import allclose
from pypto.testing.spec import ScalarSpec, TensorSpec


@dataclasses.dataclass
class RunResult:
    passed: bool
    error: Optional[str] = None
    work_dir: Optional[Path] = None
    outputs: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else f"FAIL: {self.error}"
        return f"{verdict} ({self.seconds:.2f}s)"


class _Failure(Exception):
    pass


def run(program, specs: Sequence, golden: Optional[Callable] = None, *, platform: Optional[str] = None,
        rtol: float = 1e-5, atol: float = 1e-5, compare: Optional[dict] = None, poison_outputs: bool = True,
        compile_options: Optional[dict] = None, seed: Optional[int] = None, compile_only: bool = False,
        unchecked: Sequence[str] = ()) -> RunResult:
    """Runs ``program`` (a ``@pl.jit`` function or a ``@pl.program``) once and checks its outputs.

    ``specs`` has one ``TensorSpec``/``ScalarSpec`` per parameter, in parameter order. ``golden(values)``
    receives every argument by name (inputs cloned, outputs as fresh tensors holding their initial
    values) and fills the outputs in place. ``compare`` maps output names to comparators
    (``pypto.testing.allclose``, ``ratio_allclose``, ...); the default is ``allclose(rtol, atol)``.
    ``poison_outputs`` (the runtime's default, ``RunConfig.poison_outputs``) fills pure outputs with a
    NaN pattern before the run, so that elements the program never writes show up (see
    ``allclose(nan_ok=True)`` for outputs written only where the data says so); False keeps the
    initial values the specs give.
    ``compile_only`` stops after compiling, which on a simulator includes building the hand-written
    kernels, so their compile errors surface without a run. ``unchecked`` names tensors the program
    may write as scratch space (a workspace between its kernels): whatever they hold afterwards is not
    compared.
    """
    import torch

    start = time.time()
    work_dir = None
    try:
        if seed is not None:
            torch.manual_seed(seed)
        with _stage("compile"):
            compiled = _compile(program, specs, platform, compile_options or {})
            work_dir = Path(compiled.output_dir)
            outputs = _check_specs(specs, compiled.parameters)
            unknown = sorted(set(unchecked) - {s.name for s in specs})
            if unknown:
                raise _Failure(f"unchecked names {unknown}, which are not parameters of the program")
            outputs = {name: param for name, param in outputs.items() if name not in unchecked}
        if compile_only:
            return _finish(RunResult(True, None, work_dir), start)
        with _stage("generate inputs"):
            args = {s.name: s.create() if isinstance(s, TensorSpec) else s.python_value() for s in specs}
            # What the reference sees: the inputs as generated, pure outputs at their initial values.
            inputs = {name: value.clone() if isinstance(value, torch.Tensor) else value for name, value in args.items()}
        expected = None
        if golden is not None:
            with _stage("compute golden"):
                expected = {name: value.clone() if isinstance(value, torch.Tensor) else value
                            for name, value in inputs.items()}
                golden(expected)
        with _stage("runtime"):
            from pypto.runtime.config import RunConfig

            config = RunConfig(platform=compiled.platform, poison_outputs=poison_outputs)
            compiled(*[args[s.name] for s in specs], config=config)
        if expected is not None:
            _validate(outputs, args, expected, inputs, compare or {}, rtol, atol)
    except _Failure as failure:
        return _finish(RunResult(False, str(failure), work_dir), start)
    result = RunResult(True, None, work_dir, {name: args[name] for name in outputs})
    return _finish(result, start)


def _finish(result: RunResult, start: float) -> RunResult:
    result.seconds = time.time() - start
    print(f"[RUN] {result}", flush=True)
    return result


class _stage:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        print(f"[RUN] {self.name} ...", flush=True)
        self.start = time.time()

    def __exit__(self, kind, error, _traceback):
        if error is not None and not isinstance(error, _Failure) and isinstance(error, Exception):
            raise _Failure(f"{self.name} failed: {type(error).__name__}: {error}") from error
        if error is None:
            print(f"[RUN] {self.name} done ({time.time() - self.start:.2f}s)", flush=True)
        return False


def _compile(program, specs, platform, options):
    from pypto import _core
    from pypto.jit.decorator import JITFunction
    from pypto.language.program import DynamicProgram
    from pypto.runtime.config import RunConfig

    config = RunConfig(**({"platform": platform} if platform else {}), **options)
    if isinstance(program, DynamicProgram):
        _check_names(specs, program.parameters)
        program = program.specialise(**{s.name: (s.shape, s.dtype) for s in specs if isinstance(s, TensorSpec)})
    if isinstance(program, _core.Program):
        from pypto.ir import compile as compile_program

        return compile_program(program, platform=config.platform, **options)
    if not isinstance(program, JITFunction):
        raise TypeError(f"run expects a @pl.jit function or a @pl.program, got {type(program).__name__}")
    import torch

    _check_names(specs, list(program._signature.parameters))
    dummies = [torch.empty(tuple(s.shape), dtype=s.dtype) if isinstance(s, TensorSpec) else s.python_value()
               for s in specs]
    return program.compile(*dummies, config=config)


def _check_specs(specs, parameters) -> dict:
    """Specs must name the parameters in order and agree with their shapes, dtypes and (where a spec
    states one) direction. Returns the output parameters by name."""
    from pypto.runtime.torch_interop import dsl_dtype_name, dsl_shape

    _check_names(specs, [p.name for p in parameters])
    outputs = {}
    for spec, param in zip(specs, parameters):
        if isinstance(spec, TensorSpec) != (param.kind == "tensor"):
            raise _Failure(f"{spec.name!r} is a {param.kind} parameter; use a "
                           f"{'TensorSpec' if param.kind == 'tensor' else 'ScalarSpec'}")
        dtype = dsl_dtype_name(spec.dtype)
        if dtype == "INT64" and param.dtype == "INDEX":  # an index tensor holds 64-bit integers
            dtype = "INDEX"
        if dtype != param.dtype:
            raise _Failure(f"{spec.name!r}: the spec's dtype is {spec.dtype}, the parameter's is {param.dtype}")
        if isinstance(spec, TensorSpec):
            if dsl_shape(dtype, spec.shape) != tuple(param.shape):
                raise _Failure(f"{spec.name!r}: the spec's shape is {tuple(spec.shape)}, the parameter's is "
                               f"{tuple(param.shape)}")
            if spec.is_output is not None and spec.is_output != param.is_output:
                raise _Failure(f"{spec.name!r}: the spec says is_output={spec.is_output}, but the program "
                               f"{'writes' if param.is_output else 'only reads'} it")
            if param.is_output:
                outputs[spec.name] = param
    return outputs


def _check_names(specs, parameter_names) -> None:
    names = [s.name for s in specs]
    if names != parameter_names:
        raise _Failure(f"specs name {names}, but the program's parameters are {parameter_names} (in this order)")


def _validate(outputs, actual, expected, inputs, compare, rtol, atol) -> None:
    unknown = sorted(set(compare) - set(outputs))
    if unknown:
        raise _Failure(f"compare names {unknown}, which are not outputs of the program ({sorted(outputs)})")
    failed = []
    for name in outputs:
        comparator = compare.get(name) or allclose(rtol, atol)
        ok, detail = comparator(actual[name], expected[name], inputs=inputs)
        shape = tuple(actual[name].shape)
        print(f"[RUN]   {name!r} {'PASS' if ok else 'FAIL'} shape={shape} dtype={actual[name].dtype}"
              + (f": {detail}" if detail else ""), flush=True)
        if not ok:
            failed.append(f"{name}: {detail}")
    if failed:
        raise _Failure("outputs differ from the reference: " + "; ".join(failed))
