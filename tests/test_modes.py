"""Fast modes: bfloat16 stays within its error bounds; the embedding cache never changes a score; both show
in the hash. (Speed itself is measured in benchmarks/speed.py, never asserted in a test.)"""

from __future__ import annotations

import re

import pytest
import torch

import fastbertscore as fb
from fastbertscore import hardware
from fastbertscore.cache import EmbeddingCache

MINILM = fb.DEFAULT_MODEL


def test_bfloat16_error_bounds(mt_pairs):
    # Bounds that hold for native (AMX, AVX512-BF16) and emulated (AVX2) bfloat16 alike. A per-pair bound makes
    # a rank test redundant: pairs more than 4e-3 apart in exact F can never swap.
    cands, refs = map(list, zip(*dict.fromkeys(zip(*mt_pairs))))
    exact = fb.score(cands, refs, model_type=MINILM, num_layers=6)
    got, hashcode = fb.score(cands, refs, model_type=MINILM, num_layers=6, dtype="bfloat16", return_hash=True)
    for name, a, b in zip("PRF", got, exact):
        delta = (a - b).abs()
        assert delta.max().item() <= 2e-3, f"{name}: max |delta| {delta.max().item():.2e}"
        assert delta.mean().item() <= 8e-4, f"{name}: mean |delta| {delta.mean().item():.2e}"
        assert a.dtype == torch.float32
    # It really ran in reduced precision: float32 agrees to about 1e-7, bfloat16 keeps 8 bits of mantissa.
    assert (got[2] - exact[2]).abs().max().item() > 1e-5
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
    assert hardware.auto_dtype("cpu") == ("bfloat16" if hardware.cpu_native_bf16() else "float32")


def test_auto_dtype_is_resolved_logged_once_and_named_in_the_hash(caplog, monkeypatch):
    monkeypatch.setattr(hardware, "_logged_auto", set())  # as in a fresh process
    with caplog.at_level("INFO", logger="fastbertscore.hardware"):
        scorers = [fb.BERTScorer(model_type=MINILM, dtype="auto", device="cpu") for _ in range(2)]
    resolved = hardware.auto_dtype("cpu")
    assert [s.dtype for s in scorers] == [resolved, resolved]
    assert caplog.text.count("dtype='auto' on cpu: " + resolved) == 1
    assert "auto" not in scorers[0].hash
    assert scorers[0].hash == fb.BERTScorer(model_type=MINILM, dtype=resolved, device="cpu").hash


def test_explicit_bfloat16_warns_once_per_scorer_where_it_is_emulated(caplog):
    with caplog.at_level("WARNING", logger="fastbertscore.scorer"):
        for _ in range(2):
            fb.BERTScorer(model_type=MINILM, dtype="bfloat16", device="cpu")
        fb.BERTScorer(model_type=MINILM, dtype="float32", device="cpu")
    warnings = [r.getMessage() for r in caplog.records if "bfloat16 is emulated" in r.getMessage()]
    if hardware.cpu_native_bf16():
        assert warnings == []
    else:
        assert len(warnings) == 2
        assert hardware.cpu_capability() in warnings[0] and "several times slower than float32" in warnings[0]


@pytest.mark.parametrize("device", ["cuda", "cuda:3", "mps", "garbage", "cpu:7x"])
def test_unavailable_devices_are_refused_before_any_model_work(device):
    if device in hardware.available_devices() or (device == "cuda" and torch.cuda.is_available()):
        pytest.skip(f"{device} exists on this machine")
    # A model that does not exist: the device error must come first, so no model was looked for.
    with pytest.raises(ValueError, match=rf"device='{re.escape(device)}' is not .*available here: cpu"):
        fb.BERTScorer(model_type="no-such-org/no-such-model", device=device)
    with pytest.raises(ValueError, match="available here: cpu"):
        fb.score(["a"], ["b"], model_type=MINILM, device=device)


def test_cache_reuses_references_without_changing_scores(mt_pairs):
    cands, refs = mt_pairs
    cached = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_mb=64)
    plain = fb.BERTScorer(model_type=MINILM, num_layers=4)
    first = cached.score(cands[:30], refs[:30])
    misses = cached.cache.misses
    second = cached.score(cands[30:], refs[:30])  # another "system" against the same references
    assert cached.cache.hits >= len(set(refs[:30]) - set(cands[30:]))
    assert cached.cache.misses - misses <= len(set(cands[30:]) | set(refs[:30]))
    for a, b in zip(second, plain.score(cands[30:], refs[:30])):
        assert torch.allclose(a, b, atol=1e-6, rtol=0)
    for a, b in zip(first, plain.score(cands[:30], refs[:30])):
        assert torch.allclose(a, b, atol=1e-6, rtol=0)


def test_cache_stays_within_its_budget():
    cache = EmbeddingCache(max_bytes=3 * 4 * 10 * 8)  # room for three (10, 8) float32 tensors
    for i in range(5):
        cache.put([i], torch.zeros(10, 8))
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    assert cache.get([0]) is None and cache.get([4]) is not None
    cache.put([99], torch.zeros(1000, 8))  # larger than the whole budget: not kept
    assert cache.get([99]) is None


def test_disk_cache_survives_a_new_scorer_and_changes_no_score(mt_pairs, tmp_path):
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    plain = fb.score(cands, refs, model_type=MINILM, num_layers=4)
    first = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    first.score(cands, refs)
    assert first.disk_cache.hits == 0 and first.disk_cache.misses == len(set(cands) | set(refs))
    again = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path, cache_mb=8)  # as after a restart
    for a, b in zip(again.score(cands, refs), plain):
        assert torch.allclose(a, b, atol=1e-6, rtol=0)
    assert again.disk_cache.hits == len(set(cands) | set(refs)) and again.disk_cache.misses == 0
    other_layer = fb.BERTScorer(model_type=MINILM, num_layers=3, cache_dir=tmp_path)
    assert other_layer.disk_cache.folder != first.disk_cache.folder
    bf16 = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path, dtype="bfloat16")
    assert bf16.disk_cache.folder != first.disk_cache.folder
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "flip a byte", "empty", "garbage"])
def test_corrupted_embedding_cache_file_is_detected_and_rebuilt(mt_pairs, tmp_path, damage, caplog):
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    expected = scorer.score(cands, refs)
    path = scorer.disk_cache.path_for(scorer.tokenizer(refs[0])["input_ids"])
    data = path.read_bytes()
    damaged = {
        "truncate": data[: len(data) - 100],
        "flip a byte": data[:-10] + bytes([data[-10] ^ 0x40]) + data[-9:],
        "empty": b"",
        "garbage": b"\x00" * len(data),
    }[damage]
    path.write_bytes(damaged)
    fresh = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    with caplog.at_level("WARNING", logger="fastbertscore.diskcache"):
        got = fresh.score(cands, refs)
    for a, b in zip(got, expected):
        assert torch.allclose(a, b, atol=1e-6, rtol=0)
    assert fresh.disk_cache.corrupted == 1
    assert str(path) in caplog.text and "is corrupted" in caplog.text
    after_restart = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    after_restart.score(cands, refs)  # the entry was rebuilt: every text is a valid hit again
    assert after_restart.disk_cache.corrupted == 0 and after_restart.disk_cache.misses == 0


def test_cache_dir_must_be_a_folder(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="exists and is not a folder"):
        fb.BERTScorer(model_type=MINILM, cache_dir=tmp_path / "file")
    with pytest.raises(TypeError, match="cache_dir must be a folder path"):
        fb.BERTScorer(model_type=MINILM, cache_dir=3)
