"""Precision modes and devices: bfloat16 stays within its error bounds, dtype='auto' follows the hardware, and
every mode shows in the hash. (Speed is measured in benchmarks/speed.py, never asserted in a test. The caches,
the other fast mode, are tested in tests/cache/.)"""

from __future__ import annotations

import re

import pytest
import torch
from paths import MINILM
from tolerances import assert_reduced_precision_close, prf_bounds

import fastbertscore as fb
from fastbertscore import hardware


@pytest.mark.slow
def test_bfloat16_error_bounds(mt_pairs):
    # Bounds that hold for native (AMX, AVX512-BF16) and emulated (AVX2) bfloat16 alike (tolerances.py). A
    # per-pair bound makes a rank test redundant: pairs more than twice it apart in exact F can never swap.
    cands, refs = map(list, zip(*dict.fromkeys(zip(*mt_pairs, strict=True)), strict=True))
    exact = fb.score(cands, refs, model_type=MINILM, num_layers=6)
    got, hashcode = fb.score(cands, refs, model_type=MINILM, num_layers=6, dtype="bfloat16", return_hash=True)
    assert_reduced_precision_close(got, exact)
    assert all(a.dtype == torch.float32 for a in got)
    # It really ran in reduced precision: bfloat16 keeps 8 bits of mantissa, far outside the fp32 bound.
    assert (got[2] - exact[2]).abs().max().item() > prf_bounds()[2]
    assert hashcode.endswith("_dtype=bfloat16")


def test_modes_are_named_in_the_hash():
    assert fb.BERTScorer(model_type=MINILM, long_inputs="window").hash.endswith("_long=window(stride=127)")
    assert "_dtype" not in fb.BERTScorer(model_type=MINILM).hash
    with pytest.raises(ValueError, match="dtype='float16' needs a CUDA device"):
        fb.BERTScorer(model_type=MINILM, dtype="float16", device="cpu")
    with pytest.raises(ValueError, match="dtype='int4' is not one of float32, bfloat16, float16, auto"):
        fb.BERTScorer(model_type=MINILM, dtype="int4")


def test_auto_resolves_to_what_the_hardware_runs_fast():
    assert hardware.auto_dtype("cpu", cpu_bf16=True) == "bfloat16"
    assert hardware.auto_dtype("cpu", cpu_bf16=False) == "float32"
    assert hardware.auto_dtype("cuda:0", cuda_bf16=True) == "bfloat16"
    assert hardware.auto_dtype("cuda", cuda_bf16=False) == "float16"
    assert hardware.auto_dtype("mps") == "float32"
    assert hardware.auto_dtype("cpu") == ("bfloat16" if hardware.cpu_bf16_pays() else "float32")


def test_auto_runs_bfloat16_on_a_cpu_only_where_its_products_are_faster():
    """A native bfloat16 unit is not enough: on some CPUs that list AVX512-BF16 its products run at half float32's
    speed. The measured speed-up decides, with a margin, once per process."""
    speedup = hardware.cpu_bf16_speedup()
    assert speedup == hardware.cpu_bf16_speedup(), "measured once: every scorer of a run sees the same choice"
    assert (speedup == 0.0) is (not hardware.cpu_native_bf16()), "emulated bfloat16 is not measured"
    assert hardware.cpu_bf16_pays() is (speedup >= hardware.BF16_AUTO_SPEEDUP)
    assert (hardware.auto_dtype("cpu") == "bfloat16") is hardware.cpu_bf16_pays()


def test_auto_dtype_is_resolved_logged_once_and_named_in_the_hash(caplog, monkeypatch):
    monkeypatch.setattr(hardware, "_logged_auto", set())  # as in a fresh process
    with caplog.at_level("INFO", logger="fastbertscore.hardware"):
        scorers = [fb.BERTScorer(model_type=MINILM, dtype="auto", device="cpu") for _ in range(2)]
    resolved = hardware.auto_dtype("cpu")
    assert [s.dtype for s in scorers] == [resolved, resolved]
    assert caplog.text.count("dtype='auto' on cpu: " + resolved) == 1
    assert "auto" not in scorers[0].hash
    assert scorers[0].hash == fb.BERTScorer(model_type=MINILM, dtype=resolved, device="cpu").hash


@pytest.mark.parametrize("native", [False, True])
def test_explicit_bfloat16_warns_once_per_scorer_where_it_is_slower(caplog, monkeypatch, native):
    """Both kinds of CPU on any CPU: the hardware probe answers as the parameter says (emulated, or native and
    faster than float32)."""
    monkeypatch.setattr(hardware, "cpu_native_bf16", lambda: native)
    monkeypatch.setattr(hardware, "cpu_bf16_pays", lambda: native)
    try:
        with caplog.at_level("WARNING"):
            for _ in range(2):
                fb.BERTScorer(model_type=MINILM, dtype="bfloat16", device="cpu")
            fb.BERTScorer(model_type=MINILM, dtype="float32", device="cpu")
    finally:
        fb.clear_model_cache()  # a bfloat16 copy of the weights (native) is this test's alone
    warnings = [r.getMessage() for r in caplog.records if "bfloat16" in r.getMessage()]
    if native:
        assert warnings == []
    else:
        assert len(warnings) == 2, warnings
        assert "bfloat16 is emulated" in warnings[0] and "gains nothing over float32 here" in warnings[0]


@pytest.mark.parametrize("device", ["cuda", "cuda:3", "mps", "garbage", "cpu:7x"])
def test_unavailable_devices_are_refused_before_any_model_work(device):
    if device in hardware.available_devices() or (device == "cuda" and torch.cuda.is_available()):
        pytest.skip(f"{device} exists on this machine")
    # A model that does not exist: the device error must come first, so no model was looked for.
    with pytest.raises(ValueError, match=rf"device='{re.escape(device)}' is not .*available here: cpu"):
        fb.BERTScorer(model_type="no-such-org/no-such-model", device=device)
    with pytest.raises(ValueError, match="available here: cpu"):
        fb.score(["a"], ["b"], model_type=MINILM, device=device)


@pytest.mark.slow
def test_native_bfloat16_stores_the_weights_in_bfloat16_within_the_same_bounds(mt_pairs, monkeypatch):
    """On a CPU with native bf16 the weights are cast once instead of autocast per batch. Here it runs as on
    such a CPU (the hardware probe says yes); where bf16 is emulated it is slow but computes the same way."""
    cands, refs = mt_pairs[0][:24], mt_pairs[1][:24]
    exact = fb.score(cands, refs, model_type=MINILM, num_layers=6)
    monkeypatch.setattr(hardware, "cpu_native_bf16", lambda: True)
    try:
        fast = fb.BERTScorer(model_type=MINILM, num_layers=6, dtype="bfloat16", device="cpu")
        module = fast.embedder.encoder.module
        kinds = {type(m).__name__: p.dtype for m in module.modules() for p in m.parameters(recurse=False)}
        assert kinds["Linear"] == torch.bfloat16 and kinds["Embedding"] == torch.bfloat16
        assert kinds["LayerNorm"] == torch.float32
        assert_reduced_precision_close(fast.score(cands, refs), exact)
    finally:
        fb.clear_model_cache()  # the bfloat16 copy is this test's alone
