"""Tensors kept on the devices across the calls of a distributed program (upstream's prepared
worker: ``with compiled.prepare() as rt``, ``rt.alloc_tensor``, ``rt.alloc_stacked_tensor``).

On the simulators a device's memory is this process's memory, so a resident tensor is a torch
tensor the prepared worker owns; passing its handle to a call passes that tensor in place."""

import ctypes


class DeviceTensor:
    """A tensor allocated on one rank's device: ``data_ptr`` and ``nbytes`` as upstream's handle."""

    def __init__(self, tensor, worker_id: int = 0):
        self.tensor = tensor
        self.worker_id = worker_id

    @property
    def data_ptr(self) -> int:
        return self.tensor.data_ptr()

    @property
    def nbytes(self) -> int:
        return self.tensor.numel() * self.tensor.element_size()

    @property
    def shape(self) -> tuple:
        return tuple(self.tensor.shape)


class StackedDeviceTensor:
    """A tensor of shape ``[ranks, *tail]`` whose shard ``i`` lives on worker ``worker_ids[i]``.

    ``whole``, when given, is one tensor of that shape whose ``[i]`` are the shards' tensors: a call
    then passes it in place. Without it (shards allocated one by one) a call stacks the shards into a
    temporary and copies the results back."""

    def __init__(self, shards, shape, worker_ids, whole=None):
        if len(shards) != len(worker_ids) or len(shards) != shape[0]:
            raise ValueError(f"a stacked tensor of shape {list(shape)} needs {shape[0]} shards and worker ids, "
                             f"got {len(shards)} and {len(worker_ids)}")
        self.shards = list(shards)
        self.shape = tuple(shape)
        self.worker_ids = tuple(worker_ids)
        self.whole = whole


class PreparedWorker:
    """What ``DistributedCompiledProgram.prepare()`` enters: allocates resident tensors and runs the
    program with them (``rt(*args, config=...)``, handles in place of tensors)."""

    def __init__(self, program, config=None):
        self._program = program
        self._config = config
        self._live = set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._live.clear()
        return False

    def __call__(self, *args, config=None, **kwargs):
        import torch

        bound, write_back = [], []
        for arg in args:
            if isinstance(arg, DeviceTensor):
                bound.append(self._checked(arg).tensor)
            elif isinstance(arg, StackedDeviceTensor):
                shards = [self._checked(shard).tensor for shard in arg.shards]
                if arg.whole is not None:
                    bound.append(arg.whole)
                    continue
                stacked = torch.stack(shards)
                write_back.append((arg, stacked))
                bound.append(stacked)
            else:
                bound.append(arg)
        self._program(*bound, config=config or self._config, **kwargs)
        for handle, stacked in write_back:  # the shards are separate tensors: copy the results back
            for shard, values in zip(handle.shards, stacked):
                shard.tensor.copy_(values)

    def alloc_tensor(self, shape, dtype, init=None, worker_id: int = 0) -> DeviceTensor:
        import torch

        from pypto.runtime.torch_interop import torch_dtype

        dtype = dtype if isinstance(dtype, torch.dtype) else torch_dtype(str(dtype).removeprefix("pl."))
        tensor = torch.zeros(tuple(shape), dtype=dtype)
        if init is not None:
            tensor.copy_(init.reshape(tensor.shape))
        return self._own(DeviceTensor(tensor, worker_id))

    def alloc_stacked_tensor(self, tensor) -> StackedDeviceTensor:
        """Uploads ``tensor``'s shard ``i`` to worker ``i``. The shards are views of one copy, so that a
        call passes that copy in place: a stack per call would hold every weight twice (pypto-lib's
        MoE keeps gigabytes of expert weights resident this way)."""
        import torch

        whole = torch.empty(tuple(tensor.shape), dtype=tensor.dtype)
        whole.copy_(tensor)
        shards = [self._own(DeviceTensor(whole[i], worker_id=i)) for i in range(tensor.shape[0])]
        return StackedDeviceTensor(shards, tuple(tensor.shape), tuple(range(tensor.shape[0])), whole=whole)

    def free_tensor(self, handle: DeviceTensor, worker_id: int = 0) -> None:
        self._live.discard(id(handle))

    def free_stacked_tensor(self, handle: StackedDeviceTensor) -> None:
        for shard in handle.shards:
            self.free_tensor(shard)

    def copy_from(self, dst_ptr: int, src_ptr: int, nbytes: int, worker_id: int = 0) -> None:
        """Device to host: on the simulators both are this process's memory."""
        ctypes.memmove(dst_ptr, src_ptr, nbytes)

    def copy_stacked_from(self, handle: StackedDeviceTensor, tensor) -> None:
        for i, shard in enumerate(handle.shards):
            tensor[i].copy_(self._checked(shard).tensor.reshape(tensor[i].shape))

    def _own(self, handle: DeviceTensor) -> DeviceTensor:
        self._live.add(id(handle))
        return handle

    def _checked(self, handle: DeviceTensor) -> DeviceTensor:
        if id(handle) not in self._live:
            raise ValueError("a resident tensor was used after free_tensor, or outside the prepare() that "
                             "allocated it")
        return handle
