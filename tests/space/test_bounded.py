"""Every cache the Space keeps has a bound: each is filled past it here."""

from __future__ import annotations

import pytest
from paths import MINILM

import fastbertscore as fb
from fastbertscore import space
from fastbertscore.space.bounded import BoundedCache
from fastbertscore.space.uploads import results_folder, write_results


def test_the_no_baseline_notes_keep_at_most_max_notes():
    # They were a dict that only grew: one entry per language, model and idf sentence list ever asked for.
    langs = [f"x{k}" for k in range(space.MAX_NOTES + 3)]
    for lang in langs:
        _, note = space.space_scorer(fb.Settings(model_type=MINILM, lang=lang))
        assert f"language {lang!r}" in note
    assert len(space.NOTES) == space.MAX_NOTES
    keys = [space.note_key(fb.Settings(model_type=MINILM, lang=lang)) for lang in langs]
    assert keys[0] not in space.NOTES and keys[-1] in space.NOTES  # the least recently used went first


def test_a_note_is_not_kept_per_idf_sentence_list():
    # The key held the request's idf sentences (its references, up to megabytes), so every request with new
    # references kept them alive in a new entry.
    big = "A reference of a request. " * 20_000
    keys = set()
    for k in range(3):
        settings = fb.Settings(model_type=MINILM, lang="xy", idf=True)
        assert "language 'xy'" in space.space_scorer(settings, [f"{big} {k}"])[1]
        keys.add(space.note_key(settings))
    assert len(keys) == 1 and keys <= set(space.NOTES) and all(big not in repr(key) for key in space.NOTES)


def test_the_notes_are_bounded_in_bytes_too():
    # 20 requests of 2 MB languages kept about 80 MB in the note cache (64 entries of any size). The language box
    # now takes known codes only (tests/space/test_inputs.py); the cache holds its bound in bytes whatever its keys.
    assert (space.NOTES.size, space.NOTES.max_bytes) == (space.MAX_NOTES, space.MAX_NOTE_BYTES)
    notes: BoundedCache[str] = BoundedCache(space.MAX_NOTES, space.MAX_NOTE_BYTES)
    for k in range(20):
        notes.put(("model", f"{k}" + "x" * 2_000_000), space.no_baseline_note("xx", MINILM))
        notes.put(("model", f"{k}" + "x" * 20_000), space.no_baseline_note("xx", MINILM))
        assert notes.bytes <= space.MAX_NOTE_BYTES
    assert 0 < len(notes) < 20


def test_a_bounded_cache_in_bytes_drops_the_least_recently_used_and_what_is_too_heavy_alone():
    cache: BoundedCache[str] = BoundedCache(10, max_bytes=100)
    for k in range(5):
        cache.put(k, "x" * 30)  # weighs 33: three fit
    assert sorted(cache) == [2, 3, 4] and cache.bytes == 99
    cache.put("heavy", "x" * 200)
    assert "heavy" not in cache and sorted(cache) == [2, 3, 4]


def test_result_files_keep_at_most_max_result_files():
    for k in range(space.MAX_RESULT_FILES + 5):
        newest = write_results([["row"], [k]])
    files = list(results_folder().glob("*.csv"))
    assert len(files) == space.MAX_RESULT_FILES and any(str(f) == newest for f in files)


def test_a_bounded_cache_drops_the_least_recently_used():
    cache: BoundedCache[int] = BoundedCache(3)
    for k in range(10):
        cache.put(k, k)
        cache.get(0)  # kept in use: never the least recently used
    assert len(cache) == 3 and sorted(cache) == [0, 8, 9]
    with pytest.raises(ValueError, match="at least one entry"):
        BoundedCache(0)
