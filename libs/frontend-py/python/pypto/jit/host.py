"""``@pl.jit.host``: the host orchestrator of a distributed (L3) program.

Compiling one evaluates its body into a plan of per-rank dispatches (``host_plan.py``) for the
world of ``RunConfig.distributed_config`` (one rank, device 0, when none is given, as upstream), then
compiles each distinct chip program the plan dispatches with the ordinary ``@pl.jit`` path, into
``<build>/next_levels/<entry>[_k]``. In an MPI job (every process running the script) rank 0
compiles them and the other processes load its builds (``distributed_mpi.compile_once``)."""

import dataclasses
from pathlib import Path

from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig, write_plan
from pypto.jit.decorator import JITFunction
from pypto.jit.host_plan import HostTensor, WindowView, evaluate
from pypto.language.parser.diagnostics import InvalidOperationError
from pypto.runtime.config import RunConfig, new_build_dir
from pypto.runtime.torch_interop import dsl_dtype_name, torch_dtype


class HostFunction(JITFunction):
    """A ``@pl.jit.host`` function. ``compile`` returns a ``DistributedCompiledProgram``; calling the
    function compiles (or reuses) it and runs it."""

    def __init__(self, fn):
        super().__init__(fn, form="host")

    def __call__(self, *args, config=None, **kwargs):
        compiled = self.compile(*args, config=config, **kwargs)
        compiled(*args, config=config, **kwargs)
        return None

    def compile(self, *args, config=None, **kwargs) -> DistributedCompiledProgram:
        config = config or RunConfig()
        distributed = config.distributed_config or DistributedConfig()
        params = self._host_params(args, kwargs)
        plan = evaluate(self._source_info(), self._names(), distributed.world_size, params)
        self._check_every_rank_dispatched(plan, distributed)
        key = (
            self._source_info().hash,
            tuple(sorted((d.entry.__name__, d.entry._content_hash()) for d in plan.dispatches)),
            tuple(sorted((n, sub._content_hash()) for d in plan.dispatches for n, sub in d.entry._subfunctions().items())),
            config.platform,
            tuple((name, (p.shape, p.dtype) if isinstance(p, HostTensor) else p) for name, p in params.items()),
            tuple(distributed.device_ids),
            bool(config.dump_passes),
            config.save_kernels_dir,
        )
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._build(plan, params, config, distributed)
            self._cache[key] = compiled
        return compiled

    def lower(self, *args, config=None, **kwargs):
        raise NotImplementedError(
            f"{self.__name__}: a @pl.jit.host function has no single lowered program; compile it and read "
            "chip_programs of the result"
        )

    # -- internals --------------------------------------------------------------------------
    def _host_params(self, args, kwargs) -> dict:
        import torch

        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        params = {}
        for name, value in bound.arguments.items():
            if isinstance(value, torch.Tensor):
                dtype = dsl_dtype_name(value.dtype)
                if dtype is None:
                    raise TypeError(f"{self.__name__}: argument {name!r} has unsupported dtype {value.dtype}")
                params[name] = HostTensor(name, tuple(value.shape), dtype)
            elif isinstance(value, (bool, int, float)):
                params[name] = value
            else:
                raise TypeError(
                    f"{self.__name__}: argument {name!r} must be a torch.Tensor or a Python number, "
                    f"got {type(value).__name__}"
                )
        return params

    def _check_every_rank_dispatched(self, plan, distributed) -> None:
        idle = sorted(set(range(plan.world_size)) - {d.rank for d in plan.dispatches})
        if not idle:
            return
        source = self._source_info()
        ranks = ", ".join(str(r) for r in idle)
        raise InvalidOperationError(
            f"{self.__name__} dispatches nothing to rank(s) {ranks} of its {plan.world_size}-rank world "
            f"(DistributedConfig.device_ids={list(distributed.device_ids)})",
            source.filename,
            source.line_offset + 1,
            source.column_offset + 1,
            "the world size is len(device_ids): loop over pl.range(pld.world_size()) and dispatch with device=r",
        )

    def _build(self, plan, params, config, distributed) -> DistributedCompiledProgram:
        from pypto.ir import distributed_mpi

        def build():
            return self._compile_chips(plan, params, config, distributed)

        if not distributed_mpi.compiles_in_job(config):
            return build()

        # Every process of an MPI job runs this compile: rank 0 compiles, the others load its builds.
        def load(shared):
            programs = distributed_mpi.load_chips(shared, config.platform)
            return DistributedCompiledProgram(self.__name__, config.platform, Path(shared["output_dir"]), distributed,
                                              params, plan, programs, comm_backend=config.comm_backend)

        return distributed_mpi.compile_once(build, load)

    def _compile_chips(self, plan, params, config, distributed) -> DistributedCompiledProgram:
        import torch

        output_dir = new_build_dir(config, f"_jit_{self.__name__}")
        chip_dirs = {}  # (entry, argument specs) -> its build directory's name
        programs = []
        paths = []
        for dispatch in plan.dispatches:
            examples = []
            spec = []
            for arg in dispatch.args:
                if isinstance(arg, (HostTensor, WindowView)):
                    examples.append(torch.zeros(arg.shape, dtype=torch_dtype(arg.dtype)))
                    spec.append((arg.shape, arg.dtype))
                else:
                    examples.append(arg)
                    spec.append(arg)
            key = (id(dispatch.entry), tuple(spec))
            if key not in chip_dirs:
                name = dispatch.entry.__name__
                taken = sum(1 for k in chip_dirs if k[0] == id(dispatch.entry))
                chip_dirs[key] = name if taken == 0 else f"{name}_{taken}"
            chip_dir = output_dir / "next_levels" / chip_dirs[key]
            chip_config = dataclasses.replace(config, distributed_config=None, save_kernels_dir=str(chip_dir))
            programs.append(dispatch.entry.compile(*examples, config=chip_config))
            paths.append(chip_dir)
        write_plan(output_dir, self.__name__, config.platform, distributed, plan, paths)
        return DistributedCompiledProgram(self.__name__, config.platform, output_dir, distributed, params, plan, programs,
                                          comm_backend=config.comm_backend)
