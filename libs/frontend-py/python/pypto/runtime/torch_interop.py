"""Mapping torch dtypes onto DSL dtypes (torch itself is imported only where tensors are used)."""

# torch dtype name -> DSL dtype name, for specialising on and passing the tensors of a call.
TORCH_TO_DSL = {
    "float32": "FP32",
    "float16": "FP16",
    "bfloat16": "BF16",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "uint8": "UINT8",
    "uint16": "UINT16",  # torch >= 2.3 (few torch ops take it; tensors pass through as bytes)
    "uint32": "UINT32",
    "bool": "BOOL",
    # MX block-scale data and scales; float4_e2m1fn_x2 holds two FP4 values per element (its shape
    # counts bytes: the last dimension is half the DSL tensor's).
    "float8_e4m3fn": "FP8E4M3FN",
    "float8_e5m2": "FP8E5M2",
    "float8_e8m0fnu": "FP8E8M0",
    "float4_e2m1fn_x2": "FP4",
}

# torch dtype -> DSL dtype name (None: unsupported), filled as dtypes are met: a call with many
# tensors looks each dtype up once.
_DSL_OF_TORCH = {}


def dsl_dtype_name(torch_dtype):
    """The DSL dtype name of a torch dtype (``torch.float32`` -> ``"FP32"``); None when the DSL has none."""
    try:
        return _DSL_OF_TORCH[torch_dtype]
    except KeyError:
        name = _DSL_OF_TORCH[torch_dtype] = TORCH_TO_DSL.get(str(torch_dtype).removeprefix("torch."))
        return name


def dsl_shape(dsl_name: str, torch_shape) -> tuple:
    """The DSL shape of a torch tensor holding ``dsl_name`` values: a float4_e2m1fn_x2 element is two FP4
    values, so the last extent doubles (``(64, 64)`` holds FP4 ``(64, 128)``)."""
    shape = tuple(torch_shape)
    if dsl_name == "FP4" and shape:
        return (*shape[:-1], shape[-1] * 2)
    return shape


# An index tensor holds 64-bit integers.
_DSL_TO_TORCH = {**{dsl: name for name, dsl in TORCH_TO_DSL.items()}, "INDEX": "int64"}


def torch_dtype_name(dsl_name: str):
    """The name of the torch dtype of a DSL dtype (``"FP32"`` -> ``"float32"``); None when torch has none."""
    return _DSL_TO_TORCH.get(dsl_name)


def torch_dtype(dsl_name: str):
    """The torch dtype of a DSL dtype name (``"FP32"`` -> ``torch.float32``); None when torch has none."""
    import torch

    name = torch_dtype_name(dsl_name)
    return getattr(torch, name, None) if name else None
