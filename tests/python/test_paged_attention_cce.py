"""pypto-lib's Qwen3-14B paged-attention CCE kernel (models/qwen3_14b/paged_attention_cce.py, about
16,000 lines of AscendC under kernels/paged_attention_cce/) runs its real body on a2a3sim: the tiling
kernel, then the mixed attention kernel on 24 blocks (cube QK and PV, online softmax on both vector
lanes), checked against the program's own torch golden at its own tolerance. Upstream's simulator
runs an empty entry instead (`# ci: no-sim`)."""

import importlib.util
import math
import os
import sys
from pathlib import Path

import pytest
import torch

_PYPTO_LIB = Path(os.environ.get("PYPTO_LIB_DIR", "/work/ext/pypto-lib"))
_MODEL_DIR = _PYPTO_LIB / "models" / "qwen3_14b"

pytestmark = pytest.mark.skipif(not (_MODEL_DIR / "test_paged_attention_cce.py").is_file(),
                                reason=f"pypto-lib's qwen3_14b model is not at {_MODEL_DIR} (set PYPTO_LIB_DIR)")


@pytest.fixture(scope="module")
def model():
    # pypto-lib's driver shares this file's name: load it by path, under a name of its own.
    for path in (str(_PYPTO_LIB), str(_MODEL_DIR)):
        if path not in sys.path:
            sys.path.insert(0, path)
    spec = importlib.util.spec_from_file_location("pypto_lib_paged_attention_cce_driver",
                                                  _MODEL_DIR / "test_paged_attention_cce.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _values(model, batch, context_len, capacity, seq_lens=None):
    torch.manual_seed(1234)
    values = {}
    for spec in model.build_specs(batch, context_len, capacity, random_data=True, seq_lens=seq_lens):
        init = spec.init_value() if callable(spec.init_value) else spec.init_value
        values[spec.name] = torch.zeros(spec.shape, dtype=spec.dtype) if init is None else init.to(spec.dtype)
    return values


def _run_and_compare(model, values, fn, golden):
    expected = {name: value.clone() for name, value in values.items()}
    golden(expected)
    fn(values["query"], values["key_cache"], values["value_cache"], values["block_table"], values["seq_lens"],
       values["out"])
    # The program's own check (test_paged_attention_cce.py: rtol=5e-3, atol=2e-2).
    torch.testing.assert_close(values["out"].float(), expected["out"].float(), rtol=5e-3, atol=2e-2)


def test_ragged_batch_matches_the_programs_golden(model, monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    seq_lens = torch.tensor([300 - 18 * i for i in range(model.BATCH_PAD)], dtype=torch.int32)
    values = _values(model, model.BATCH_PAD, 300, 384, seq_lens)
    _run_and_compare(model, values, model.qwen_decode_attention_cce, model.golden_attention)


def test_the_programs_own_context_length_matches_its_golden(model, monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    values = _values(model, model.BATCH_PAD, 3338, 4096)
    _run_and_compare(model, values, model.qwen_decode_attention_cce, model.golden_attention)


def test_the_second_layer_of_a_two_layer_cache(model, monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    capacity = 256
    torch.manual_seed(1234)
    values = {}
    for spec in model.build_specs(model.BATCH_PAD, 200, capacity, random_data=True, cache_layers=2):
        init = spec.init_value() if callable(spec.init_value) else spec.init_value
        values[spec.name] = torch.zeros(spec.shape, dtype=spec.dtype) if init is None else init.to(spec.dtype)
    layer_blocks = model.BATCH_PAD * math.ceil(capacity / model.BLOCK_SIZE)
    _run_and_compare(model, values, model.qwen_decode_attention_cache_offset_test,
                     lambda v: model.golden_attention(v, cache_block_offset=layer_blocks))


def test_batch_one_the_drivers_default_matches_its_golden(model, monkeypatch, tmp_path):
    # The entry is annotated [BATCH_PAD, 40, 128]; the driver's default --batch 1 passes [1, 40, 128],
    # and the JIT specialises on the tensor (test_jit_specialises_on_tensors.py).
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    values = _values(model, 1, 300, 384)
    assert values["query"].shape[0] == 1 and model.BATCH_PAD != 1
    _run_and_compare(model, values, model.qwen_decode_attention_cce, model.golden_attention)
