"""The JIT entry point. At the first call with a given specialisation (shapes, dtypes, platform)
the function's source is parsed by the C++ frontend, lowered, compiled into a build directory and
cached in memory; later calls with the same specialisation reuse it."""

import ast
import hashlib
import inspect
import os
import sys
import textwrap
import types
import warnings

from pypto import _core
from pypto.ir.compiler import entry_parameters
from pypto.jit import disk_cache
from pypto.jit.extern_decl import ExternDecl
from pypto.language.dtypes import DataType
from pypto.language.typing import DynVar, _DimExpr
from pypto.runtime import time_report
from pypto.runtime.build_dir import load_compiled, write_manifest
from pypto.runtime.compiled import CompiledProgram, Parameter
from pypto.runtime.config import RunConfig, new_build_dir, remove_if_empty, verify_requested
from pypto.runtime.scalars import check_scalar_range
from pypto.runtime.debug.run_script import write_run_script
from pypto.runtime.torch_interop import dsl_dtype_name, dsl_shape


def _dotted(node) -> str:
    """`a.b.c` for an attribute chain rooted at a plain name, else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


class _Source:
    """A function's source as the frontend needs it: dedented, with its place in the file."""

    def __init__(self, fn):
        lines, first_line = inspect.getsourcelines(fn)
        raw = "".join(lines)
        self.text = textwrap.dedent(raw)
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        self.line_offset = first_line - 1
        # Columns in diagnostics must point into the real file, before dedenting.
        first = next((line for line in lines if line.strip()), "")
        dedented_first = next((line for line in self.text.splitlines(True) if line.strip()), "")
        self.column_offset = len(first) - len(dedented_first)
        # Annotations are evaluated when the function is defined, so the code object does not list
        # the names they use (`pl.Tensor[[T, D], ...]`); the parser needs their values too.
        definition = ast.parse(self.text).body[0]
        self.annotation_names = {
            node.id
            for arg in definition.args.args
            if arg.annotation is not None
            for node in ast.walk(arg.annotation)
            if isinstance(node, ast.Name)
        }
        # `M.max_position_embeddings` with `M` a config object: each dotted chain the function writes
        # (rooted at a plain name) may read a constant of the object it starts from.
        self.attribute_chains = {
            _dotted(node) for node in ast.walk(definition) if isinstance(node, ast.Attribute) and _dotted(node)
        }
        self.parameter_lines = {arg.arg: arg.lineno + self.line_offset for arg in definition.args.args}
        digest = hashlib.sha256(_core.version().encode())
        digest.update(self.text.encode())
        self.hash = digest.hexdigest()[:16]


class JITFunction:
    """A ``@pl.jit`` entry (``form="entry"``), or a ``@pl.jit.incore`` / ``.inline`` function that
    entries call by name; those are parsed at each call site, specialised on its arguments."""

    def __init__(self, fn, form="entry", extern=None, auto_scope=True):
        self._fn = fn
        self.form = form
        # False: the entry places its runtime scopes by hand (`with pl.scope()`), the compiler opens none.
        self.auto_scope = auto_scope
        self.extern = extern  # an ExternDecl for form "extern"
        self._signature = inspect.signature(fn)
        self._source = None
        self._cache = _SpecialisationCache()
        self._dynamic = None  # parameter name -> its dynamic axes, read from the source once
        self._bind_sites = {}  # (parameter, axis) -> the line of the bind_dynamic naming it
        self._origin = None  # where the last lookup found its program: None (memory), "disk", "built"
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    # -- public API -------------------------------------------------------------------------
    @time_report.counted
    def __call__(self, *args, config=None, **kwargs):
        """Compiles (or reuses) the specialisation for these tensors and runs it in place."""
        if self.form != "entry":
            raise TypeError(
                f"{self.__name__} is a @pl.jit.{self.form} function: call it from a @pl.jit function, "
                "which compiles it as part of its program"
            )
        compiled = self.compile(*args, config=config, **kwargs)
        compiled(*self._ordered(args, kwargs), config=config)
        return None

    def compile(self, *args, config=None, **kwargs) -> CompiledProgram:
        config = config or RunConfig()
        specs = self._specs(args, kwargs)
        constants = {**self._constants(), **self._scalars(args, kwargs)}
        keyed_specs, extents = self._split_dynamic(specs)
        # Unlike upstream, dump and output options are part of the key: asking for a dump gets one.
        key = (
            self._source_info().hash,
            tuple(sorted((name, sub._content_hash()) for name, sub in self._subfunctions().items())),
            config.platform,
            tuple(sorted(keyed_specs.items())),
            tuple(sorted(constants.items())),
            bool(config.dump_passes),
            config.save_kernels_dir,
            config.task_window,
            tuple(config.ring_heap_sizes),
            tuple(config.ring_dep_pool_sizes),
            config.dfx,
            self.auto_scope,
        )
        generic, why = self._generic_verdict(key, extents, specs)
        if key in self._cache.fallback:
            generic, why = None, self._cache.fallback[key]
        if generic is not None:
            compiled = self._cached_or_built(key, _GENERIC, generic, constants, config, args, kwargs)
            if compiled is not None:
                self._explain("generic", None)
                return compiled
            why = self._cache.fallback[key]
        compiled = self._cached_or_built(key, extents, specs, constants, config, args, kwargs)
        self._explain("per-extent " + ", ".join(f"{n}[{a}]={e}" for n, a, e in extents) if extents else "static", why)
        return compiled

    def _generic_verdict(self, key, extents, specs):
        """``_generic_specs`` of these specs, remembered per key and extents: a call that repeats them
        (a decode loop) skips the parameter checks."""
        if not extents:
            return None, None
        verdict = self._cache.verdicts.get((key, extents))
        if verdict is None:
            verdict = self._cache.verdicts[(key, extents)] = self._generic_specs(specs)
        return verdict

    def _explain(self, build, why) -> None:
        """With ``PYPTO_JIT_EXPLAIN=1``, one line on stderr for each program the last lookup did not find
        in memory: which build it is (generic, per-extent with the extents, or static) and, for a
        per-extent one, why the generic build did not apply (located where the program says so)."""
        origin, self._origin = self._origin, None
        if origin is None or os.environ.get("PYPTO_JIT_EXPLAIN", "") in ("", "0"):
            return
        source = self._source_info()
        line = f"pypto jit: {self.__name__} ({source.filename}:{source.line_offset + 1}): {build}"
        if origin == "disk":
            line += " [disk cache]"
        if why:
            line += f"; generic build not used: {why}"
        print(line, file=sys.stderr, flush=True)

    def _cached_or_built(self, key, extents, specs, constants, config, args, kwargs):
        """The program for ``key`` and ``extents`` (``_GENERIC``: the one compiled for every extent of the
        dynamic axes, which ``specs`` then pass as -1), from memory, disk or a new build. A generic build
        that fails is remembered for the key, which is then compiled per extent (returns None)."""
        compiled = self._cache.lookup(key, extents)
        self._origin = None
        if compiled is not None:
            return compiled
        # The disk cache serves builds whose directory nobody asked for by name or content.
        disk_key = (key, extents, self._source_info().filename) if _disk_cacheable(config) else None
        compiled = self._from_disk(disk_key, config)
        self._origin = "disk"
        if compiled is None:
            self._origin = "built"
            if extents != _GENERIC:
                compiled = self._build(specs, constants, config, args, kwargs)
            else:
                # A failed generic build's warnings are the per-extent build's to give.
                with warnings.catch_warnings(record=True) as said:
                    warnings.simplefilter("always")
                    try:
                        compiled = self._build(specs, constants, config, args, kwargs)
                    except Exception as error:  # noqa: BLE001 - the per-extent build reports what is wrong
                        self._cache.fallback[key] = _first_line(error)
                        return None
                for warning in said:
                    warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
            if disk_key is not None:
                disk_cache.store(disk_key, compiled.output_dir)
        self._cache.insert(key, extents, compiled)
        return compiled

    def _build(self, specs, constants, config, args, kwargs) -> CompiledProgram:
        output_dir = new_build_dir(config, f"_jit_{self.__name__}")
        dump_dir = output_dir / "passes_dump" if config.dump_passes else None
        try:
            lowered = self._lower(specs, constants, config, dump_dir)
            artifacts = _core.compile(
                lowered, config.platform, str(output_dir), config.task_window,
                ring_heap=config.ring_heap_sizes, ring_dep_pool=config.ring_dep_pool_sizes,
                **config.compile_dfx()
            )
        except BaseException:
            if not config.save_kernels_dir:  # new_build_dir created it: a failed compile leaves none
                remove_if_empty(output_dir)
            raise
        parameters = self._parameters(lowered, args, kwargs)
        write_manifest(output_dir, config.platform, self.__name__, parameters)
        write_run_script(output_dir, config.platform, self.__name__, parameters)
        return CompiledProgram(artifacts, parameters)

    def warmup(self, *args, config=None, **kwargs) -> str:
        """Compiles for these arguments without running (filling the in-memory and disk caches, and
        on a simulator building the hand-written kernels); returns the build directory's path."""
        return str(self.compile(*args, config=config, **kwargs).output_dir)

    @staticmethod
    def _from_disk(disk_key, config):
        path = disk_cache.lookup(disk_key) if disk_key is not None else None
        if path is None:
            return None
        try:
            return load_compiled(path, config.platform)
        except Exception:  # noqa: BLE001 - whatever is wrong with an entry, it is rebuilt, not trusted
            disk_cache.discard(disk_key)
            return None

    def lower(self, *args, config=None, **kwargs):
        """The lowered IR program for these arguments (no artifacts are written)."""
        config = config or RunConfig()
        dump_dir = new_build_dir(config, f"_jit_{self.__name__}") / "passes_dump" if config.dump_passes else None
        constants = {**self._constants(), **self._scalars(args, kwargs)}
        return self._lower(self._specs(args, kwargs), constants, config, dump_dir)

    def clear_cache(self) -> None:
        """Forgets every compiled specialisation; the next call compiles again."""
        self._cache.clear()

    # -- internals --------------------------------------------------------------------------
    def _source_info(self) -> _Source:
        if self._source is None:
            self._source = _Source(self._fn)
        return self._source

    def _ordered(self, args, kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return list(bound.arguments.values())

    def _parameters(self, lowered, args, kwargs) -> list:
        """Every parameter in signature order: the tensors as the compiled entry has them (with the
        directions the compiler derived), the scalars with the values they were compiled with."""
        tensors = {p.name: p for p in entry_parameters(lowered)}
        scalars = self._scalars(args, kwargs)
        parameters = []
        for name, param in self._signature.parameters.items():
            if name in scalars:
                dtype = _scalar_dtype(param.annotation, scalars[name])
                parameters.append(Parameter(name, "scalar", dtype, "Scalar", value=scalars[name]))
            elif name in tensors:
                parameters.append(tensors[name])
        return parameters

    def _scalars(self, args, kwargs) -> dict:
        """Python numbers passed for parameters: specialisation constants (part of the cache key),
        each checked against its parameter's dtype, so that none wraps or saturates on its way in."""
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        scalars = {name: value for name, value in bound.arguments.items() if _is_scalar(value)}
        for name, value in scalars.items():
            dtype = _scalar_dtype(self._signature.parameters[name].annotation, value)
            try:
                check_scalar_range(name, value, dtype)
            except ValueError as error:
                raise ValueError(f"{self.__name__}: {error}") from None
        return scalars

    def _names(self) -> dict:
        """The globals and closure variables the function names (in its body or its annotations),
        with their current values."""
        code = self._fn.__code__
        names = set(code.co_names) | self._source_info().annotation_names
        values = {name: self._fn.__globals__[name] for name in names if name in self._fn.__globals__}
        for name, cell in zip(code.co_freevars, self._fn.__closure__ or ()):
            try:
                values[name] = cell.cell_contents
            except ValueError:  # not bound yet
                continue
        return values

    def _constants(self) -> dict:
        """The int/float/bool globals and closure variables the body names; they act as literals.
        The ``pl.dynamic`` dimensions it names go along: each call binds them to its tensors' extents."""
        names = self._names()
        constants = {
            name: value for name, value in names.items() if isinstance(value, (bool, int, float, DynVar, DataType))
        }
        constants.update(self._attribute_constants(names))
        for name, value in constants.items():
            if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
                raise ValueError(
                    f"{self.__name__}: the constant {name!r} = {value} does not fit in 64 bits "
                    f"(-2**63 to 2**63 - 1), which is what a literal of the program holds"
                )
        return constants

    def _attribute_constants(self, names: dict) -> dict:
        """The numbers read as attributes of an object that is not a module (`M.hidden_size` with
        `M` a config instance), keyed by the dotted name the source writes, and the ``pl.dynamic``
        dimensions held the same way (`D.block_table_flat`, pypto-lib's Qwen3 config, as upstream
        evaluates an annotation in the function's globals). Modules are left out: `pl.FP32` and
        friends are the language, read by the parser itself."""
        found = {}
        for chain in self._source_info().attribute_chains:
            root, *path = chain.split(".")
            value = names.get(root)
            if value is None or isinstance(value, types.ModuleType):
                continue
            for attribute in path:
                value = getattr(value, attribute, None)
                if value is None or isinstance(value, types.ModuleType):
                    break
            if isinstance(value, (bool, int, float, DynVar)) and not isinstance(value, DataType):
                found[chain] = value
        return found

    def _subfunctions(self) -> dict:
        """Every ``@pl.jit.incore``/``.inline`` function this one calls, directly or through others."""
        found = {}
        pending = [self]
        while pending:
            fn = pending.pop()
            for name, value in fn._names().items():
                if isinstance(value, _UnsupportedForm):
                    value._refuse()
                if isinstance(value, JITFunction) and value.form not in ("entry", "host") and name not in found:
                    found[name] = value
                    pending.append(value)
        return found

    def _content_hash(self) -> str:
        """What a change of this function must change: its source, and for a hand-written kernel the
        content of its C++ files and every header they include, read again at each call."""
        if self.extern is None:
            return self._source_info().hash
        return self._source_info().hash + ":" + self.extern.content_key()

    def _subfunction_sources(self) -> dict:
        result = {}
        for name, sub in self._subfunctions().items():
            source = sub._source_info()
            result[name] = {
                "source": source.text,
                "filename": source.filename,
                "line_offset": source.line_offset,
                "column_offset": source.column_offset,
                "form": sub.form,
                "constants": sub._constants(),
            }
            if sub.extern is not None:
                result[name]["extern"] = sub.extern.fields()
        return result

    def _specs(self, args, kwargs) -> dict:
        import torch

        bound = self._signature.bind(*args, **kwargs)
        specs = {}
        for name, value in bound.arguments.items():
            if _is_scalar(value):
                continue
            if isinstance(value, torch.Tensor):
                dtype = dsl_dtype_name(value.dtype)
                if dtype is None:
                    raise TypeError(f"{self.__name__}: argument {name!r} has unsupported dtype {value.dtype}")
                specs[name] = (dsl_shape(dtype, value.shape), dtype)
            else:
                raise TypeError(
                    f"{self.__name__}: argument {name!r} must be a torch.Tensor or a Python int, float or "
                    f"bool, got {type(value).__name__}"
                )
        return specs

    def _split_dynamic(self, specs) -> tuple:
        """``specs`` as upstream's cache key has them (a ``pl.dynamic`` axis is None), and the
        extents of those axes, which select the specialisation within that entry."""
        dynamic = self._dynamic_axes()
        keyed, extents = {}, []
        for name, (shape, dtype) in specs.items():
            axes = {axis % len(shape) for axis in dynamic.get(name, ()) if -len(shape) <= axis < len(shape)}
            keyed[name] = (tuple(None if i in axes else dim for i, dim in enumerate(shape)), dtype)
            extents.extend((name, i, shape[i]) for i in sorted(axes))
        return keyed, tuple(extents)

    def _generic_specs(self, specs):
        """``(specs, None)`` with each dynamic axis passed unbound (-1), for the build that serves every
        extent of them, or ``(None, why)`` where that build does not apply: only a bare ``pl.dynamic``
        name in a parameter's annotation is generic, on any axis (``M * 2`` and ``bind_dynamic`` of an
        axis the annotation does not name are compiled per extent), and tensors that share a name must
        agree on it here (when they do not, the per-extent build reports it, located at the annotation).
        ``why`` names the parameter and the line of the annotation or ``bind_dynamic`` that rules it out."""
        generic, seen = dict(specs), {}
        for name, param in self._signature.parameters.items():
            shape = _annotated_shape(param.annotation)
            axes = self._dynamic_axes().get(name, set())
            if not axes:
                continue
            why = self._not_generic(name, shape, axes, specs)
            dims, dtype = specs.get(name, ((), None))
            for axis in sorted(axes) if why is None else ():
                if seen.setdefault(shape[axis].name, dims[axis]) != dims[axis]:
                    why = f"{self._where(name)}: tensors sharing {shape[axis].name!r} have different extents"
                    break
            if why is not None:
                return None, why
            generic[name] = (tuple(-1 if axis in axes else dim for axis, dim in enumerate(dims)), dtype)
        return (generic, None) if seen else (None, "no dynamic axis")

    def _not_generic(self, name, shape, axes, specs):
        """Why parameter ``name``'s dynamic ``axes`` rule out the generic build, or None."""
        bound = sorted(axis for axis in axes if axis >= len(shape) or not isinstance(shape[axis], (DynVar, _DimExpr)))
        if bound:
            line = self._bind_sites.get((name, bound[0]), self._where(name))
            return f"{line}: axis {bound[0]} of {name!r} is named by bind_dynamic, not by its annotation"
        if name not in specs or len(specs[name][0]) != len(shape):
            return f"{self._where(name)}: {name!r} is passed with a rank its annotation does not have"
        scaled = sorted(axis for axis in axes if not isinstance(shape[axis], DynVar))
        if scaled:
            return f"{self._where(name)}: axis {scaled[0]} of {name!r} is a dimension expression ({shape[scaled[0]]})"
        return None

    def _where(self, name) -> str:
        """``file:line`` of parameter ``name``'s annotation."""
        source = self._source_info()
        return f"{source.filename}:{source.parameter_lines.get(name, source.line_offset + 1)}"

    def _dynamic_axes(self) -> dict:
        """The axes of each tensor parameter that are dynamic: those its annotation gives a
        ``pl.dynamic`` dimension (or one scaled or shifted), and those a ``x.bind_dynamic(axis, M)``
        statement in the body names."""
        if self._dynamic is None:
            self._dynamic = {}
            for name, param in self._signature.parameters.items():
                shape = _annotated_shape(param.annotation)
                axes = {i for i, dim in enumerate(shape) if isinstance(dim, (DynVar, _DimExpr))}
                if axes:
                    self._dynamic[name] = axes
            for node in ast.walk(ast.parse(self._source_info().text)):
                bound = _bind_dynamic_target(node)
                if bound is not None and bound[0] in self._signature.parameters:
                    self._dynamic.setdefault(bound[0], set()).add(bound[1])
                    source = self._source_info()
                    self._bind_sites.setdefault(bound, f"{source.filename}:{node.lineno + source.line_offset}")
        return self._dynamic

    def _lower(self, specs, constants, config, dump_dir=None):
        source = self._source_info()
        program = _core.parse_jit(
            source.text,
            source.filename,
            source.line_offset,
            source.column_offset,
            f"_jit_{self.__name__}",
            {name: (list(shape), dtype) for name, (shape, dtype) in specs.items()},
            constants,
            self._subfunction_sources(),
            auto_scope=self.auto_scope,
        )
        return _core.lower(program, config.platform, verify_requested(), str(dump_dir) if dump_dir else None)


# The extents under which the program compiled once for every extent of the dynamic axes is cached.
_GENERIC = ("every extent",)


class _SpecialisationCache(dict):
    """The in-memory cache, keyed as upstream keys it: a ``pl.dynamic`` axis counts as None, so one
    entry serves every extent of it. Where the program allows (``JITFunction._generic_specs``) that is
    one build for all extents (``by_extent[(key, _GENERIC)]``); otherwise each extent of the dynamic
    axes is compiled once, on first use (``by_extent``), ``fallback`` holds why a key's generic build
    failed and ``verdicts`` whether the generic build applies to a key at some extents. The entry's
    value is the program the last call under it ran. Clearing the cache forgets them all."""

    def __init__(self):
        super().__init__()
        self.by_extent = {}
        self.fallback = {}
        self.verdicts = {}

    def lookup(self, key, extents):
        return self.by_extent.get((key, extents)) if key in self else None

    def insert(self, key, extents, compiled) -> None:
        self[key] = compiled
        self.by_extent[(key, extents)] = compiled

    def clear(self) -> None:
        super().clear()
        self.by_extent.clear()
        self.fallback.clear()
        self.verdicts.clear()


def _annotated_shape(annotation) -> list:
    """The shape list of ``pl.Tensor[[...], dtype]``, also inside ``pl.Out`` / ``pl.InOut``."""
    args = getattr(annotation, "_args", ())
    if args and getattr(annotation, "_name", None) in ("Out", "InOut"):
        return _annotated_shape(args[0])
    if args and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return []


def _bind_dynamic_target(node):
    """``(parameter, axis)`` for a ``x.bind_dynamic(axis, M)`` call with a literal axis, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr != "bind_dynamic" or not isinstance(node.func.value, ast.Name) or not node.args:
        return None
    axis = node.args[0]
    if isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub) and isinstance(axis.operand, ast.Constant):
        axis = ast.Constant(-axis.operand.value)
    if not isinstance(axis, ast.Constant) or not isinstance(axis.value, int):
        return None
    return node.func.value.id, axis.value


def _first_line(error) -> str:
    """An error's message on one line: ``file:line:col: what`` for a located diagnostic (whose
    place is the ``--> file:line:col`` line under the message), else its first line."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    message = lines[0].removeprefix("error: ")
    place = next((line.strip()[3:].strip() for line in lines[1:] if line.strip().startswith("-->")), None)
    return f"{place}: {message}" if place else message


def _disk_cacheable(config) -> bool:
    """Dumps and a chosen build directory are asked for by this run; a task window, heap rings, dependency
    pools and the debugging outputs are not recorded in a build directory. Those builds skip the disk cache."""
    return (
        not config.dump_passes and not config.save_kernels_dir and config.task_window == 0
        and not config.ring_heap_sizes and not config.ring_dep_pool_sizes and not config.dfx.any()
    )


def _is_scalar(value) -> bool:
    return isinstance(value, (bool, int, float))


def _scalar_dtype(annotation, value) -> str:
    """The dtype of a scalar parameter: from ``pl.Scalar[dtype]``, else from the Python value."""
    if isinstance(annotation, DataType):  # `scale: pl.FP32`
        return annotation.name
    args = getattr(annotation, "_args", ())
    if args and hasattr(args[0], "name"):
        return args[0].name
    if isinstance(value, bool):
        return "BOOL"
    return "INT64" if isinstance(value, int) else "FP32"


class _UnsupportedForm:
    """A function under a ``@pl.jit`` form this pypto does not compile yet. Decorating works (model
    files do it at import); calling or compiling it says what is missing."""

    def __init__(self, fn, form):
        self._fn = fn
        self.form = form
        self.__name__ = getattr(fn, "__name__", form)
        self.__wrapped__ = fn

    def _refuse(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__}: @pl.jit.{self.form} functions are not supported by this pypto yet")

    __call__ = compile = lower = _refuse


_OPTIONS = {"auto_scope"}  # accepted by @pl.jit and its host/inline forms


class _JITDecorator:
    """``pl.jit``: ``@pl.jit`` / ``@pl.jit(auto_scope=...)`` make a kernel entry; ``@pl.jit.incore``
    makes a kernel that entries call (``.inline`` parses, but calling one is not supported yet);
    ``@pl.jit.host`` makes the host orchestrator of a distributed program (``pypto/jit/host.py``).
    ``.opaque`` decorates, and says that it is not supported yet when the function is used."""

    def __call__(self, fn=None, **options):
        _check_options("pl.jit", options)
        auto_scope = options.get("auto_scope", True)
        if fn is None:
            return lambda f: JITFunction(f, auto_scope=auto_scope)
        return JITFunction(fn, auto_scope=auto_scope)

    def extern(self, fn=None, **options):
        """``@pl.jit.extern(core_type="aiv"|"aic", source=PATH[, include_dirs=[...]])`` or
        ``@pl.jit.extern(core_type="mixed", aic_source=, aiv_source=[, dual_aiv_dispatch=True])``: a
        hand-written C++ kernel (``extern "C" void kernel_entry(__gm__ int64_t* args)``) that ``@pl.jit``
        functions call like a ``@pl.jit.incore`` one; a mixed one runs as an AIC + AIV group. The stub's
        body is ``...``; paths are relative to its file."""
        if fn is not None:
            raise TypeError("@pl.jit.extern needs its source: @pl.jit.extern(core_type=\"aiv\", source=\"k.cpp\")")

        def decorate(stub):
            return JITFunction(stub, "extern", ExternDecl.from_options(stub, options))

        return decorate

    def __getattr__(self, form: str):
        if form in ("incore", "inline"):
            make = lambda f: JITFunction(f, form)  # noqa: E731
        elif form == "host":
            from pypto.jit.host import HostFunction

            make = HostFunction
        elif form == "opaque":
            make = lambda f: _UnsupportedForm(f, form)  # noqa: E731
        else:
            raise AttributeError(f"pl.jit has no attribute {form!r}")

        def decorate(fn=None, **options):
            if form in ("incore", "inline", "host"):
                _check_options(f"pl.jit.{form}", options)
            if form == "host" and options.get("auto_scope") is False:
                raise NotImplementedError(
                    "@pl.jit.host(auto_scope=False) is not supported by this pypto yet: the host orchestrator's "
                    "runtime scopes are opened by the compiler; remove auto_scope=False"
                )
            if fn is None:
                return make
            return make(fn)

        return decorate


def _check_options(spelling: str, options: dict) -> None:
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"{spelling} got unexpected option(s): {', '.join(sorted(unknown))}")
    if "auto_scope" not in options:
        return
    # Runtime scopes belong to orchestration code. An incore function is a kernel of its own, so no
    # scope of it could land anywhere (upstream refuses it too); an inline one is spliced into its
    # caller, whose own auto_scope then decides, and whose hand-placed scopes it may hold.
    if spelling == "pl.jit.incore":
        raise TypeError(
            "@pl.jit.incore does not accept auto_scope=: runtime scopes belong to orchestration code (the "
            "@pl.jit entry, @pl.jit.host and @pl.jit.inline functions spliced into them)"
        )
    value = options["auto_scope"]
    if not isinstance(value, bool):
        raise TypeError(f"@{spelling}(auto_scope=...) must be True or False, got {value!r}")


jit = _JITDecorator()
