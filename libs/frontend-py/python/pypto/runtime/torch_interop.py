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
}
