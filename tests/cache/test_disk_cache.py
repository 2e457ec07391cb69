"""The disk cache of embeddings: shared across scorers and restarts, keyed by model and settings, and a damaged
file is detected, reported and rebuilt, never used."""

from __future__ import annotations

import os
import time

import pytest
from paths import MINILM
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.cache.disk import DiskCache
from fastbertscore.files import STALE_TEMPORARY_SECONDS


def test_disk_cache_survives_a_new_scorer_and_changes_no_score(mt_pairs, tmp_path):
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    plain = fb.score(cands, refs, model_type=MINILM, num_layers=4)
    first = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    first.score(cands, refs)
    assert first.disk_cache.hits == 0 and first.disk_cache.misses == len(set(cands) | set(refs))
    # as after a restart: no embedding kept in memory (another test of this process may have kept these texts' in
    # the memory cache that scorers of one model and layer share, and this scorer would find them there first)
    fb.clear_model_cache()
    again = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path, cache_mb=8)
    assert_scores_close(again.score(cands, refs), plain)
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
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        got = fresh.score(cands, refs)
    assert_scores_close(got, expected)
    assert fresh.disk_cache.corrupted == 1
    assert str(path) in caplog.text and "is corrupted" in caplog.text
    after_restart = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    after_restart.score(cands, refs)  # the entry was rebuilt: every text is a valid hit again
    assert after_restart.disk_cache.corrupted == 0 and after_restart.disk_cache.misses == 0


def test_cache_dir_must_be_a_folder(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="exists and is not a folder"):
        fb.BERTScorer(model_type=MINILM, cache_dir=tmp_path / "file")
    with pytest.raises(ValueError, match="cache_dir='a\\\\x00b' holds a NUL character"):
        fb.BERTScorer(model_type=MINILM, cache_dir="a\0b")
    with pytest.raises(TypeError, match="cache_dir must be a folder path"):
        fb.BERTScorer(model_type=MINILM, cache_dir=3)
    with pytest.raises(ValueError, match="cache_dir is empty: give a folder path"):
        fb.BERTScorer(model_type=MINILM, cache_dir="")


def test_cache_dir_takes_tilde_as_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=1, cache_dir="~/emb")
    scorer.score(["a cat"], ["the cat"])
    assert (tmp_path / "home" / "emb").is_dir() and not (tmp_path / "~").exists()  # was a folder named "~" here


def test_opening_the_cache_sweeps_the_temporary_files_of_killed_writers(tmp_path):
    first = DiskCache(tmp_path, "fingerprint", {}, token_shape=(4,))
    temporaries = first.folder / "tmp"
    assert temporaries.is_dir()  # made when the cache opens
    stale, fresh = temporaries / ".ab12.emb.dead0001.tmp", temporaries / ".cd34.emb.live0001.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half an entry")
    long_ago = time.time() - 2 * STALE_TEMPORARY_SECONDS
    os.utime(stale, (long_ago, long_ago))
    DiskCache(tmp_path, "fingerprint", {}, token_shape=(4,))
    assert not stale.exists() and fresh.exists()  # a writer that may still be alive keeps its file
