"""A cache folder follows no link (``cache_dir`` is for trusted writers; what the cache refuses on its own): an
entry, a shard folder, the ``tmp`` folder or the fingerprint folder that is a symbolic link is never read, written
or swept through, so nothing outside the folder is read as an entry, written, or deleted."""

from __future__ import annotations

import os
import time

import pytest
import torch

from fastbertscore.cache.disk import DiskCache, entry_bytes, entry_key
from fastbertscore.files import STALE_TEMPORARY_SECONDS

IDS = [101, 7, 8, 102]
STORED = torch.nn.functional.normalize(torch.arange(1.0, 17.0).reshape(4, 4), dim=-1)
OTHER = torch.nn.functional.normalize(torch.ones(4, 4), dim=-1)  # a sound entry of other numbers


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "fastbertscore.cache.disk" and r.levelname == "WARNING"]


@pytest.fixture()
def outside(tmp_path):
    """A folder outside the cache, with a sound entry of ``IDS`` holding other numbers."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / f"{entry_key(IDS)}.emb").write_bytes(entry_bytes(OTHER, entry_key(IDS)))
    return folder


def test_an_entry_that_is_a_link_is_never_read_through(tmp_path, outside, caplog):
    cache = DiskCache(tmp_path / "cache", "fp", {}, token_shape=(4,))
    path = cache.path_for(IDS)
    path.parent.mkdir()
    os.symlink(outside / path.name, path)
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        assert cache.get(IDS) is None  # not OTHER, read through the link
    (warning,) = _warnings(caplog)
    assert "is not a regular file (it is a symbolic link; it is never followed)" in warning
    assert cache.readable and cache.corrupted == 1


def test_a_shard_folder_that_is_a_link_is_never_read_through(tmp_path, outside, caplog):
    cache = DiskCache(tmp_path / "cache", "fp", {}, token_shape=(4,))
    os.symlink(outside, cache.path_for(IDS).parent)
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        assert cache.get(IDS) is None  # not OTHER, read through the link
    (warning,) = _warnings(caplog)
    assert f"its folder {entry_key(IDS)[:2]} is a symbolic link; it is never followed" in warning


def test_a_shard_folder_that_is_a_link_is_never_written_through(tmp_path, caplog):
    cache = DiskCache(tmp_path / "cache", "fp", {}, token_shape=(4,))
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    os.symlink(empty, cache.path_for(IDS).parent)
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        cache.put(IDS, STORED)
    assert list(empty.iterdir()) == []  # the entry did not land in the link's target
    (warning,) = _warnings(caplog)
    assert "cannot write to the embedding cache" in warning and "is a symbolic link; the cache follows none" in warning
    assert not cache.writable and cache.readable


def test_a_tmp_folder_that_is_a_link_is_never_swept_or_written_through(tmp_path, caplog):
    victim = tmp_path / "someone-elses"
    victim.mkdir()
    old = victim / ".their-work.tmp"  # named and aged like a dead writer's temporary file
    old.write_text("keep")
    long_ago = time.time() - 2 * STALE_TEMPORARY_SECONDS
    os.utime(old, (long_ago, long_ago))
    (tmp_path / "cache" / "fp").mkdir(parents=True)
    os.symlink(victim, tmp_path / "cache" / "fp" / "tmp")
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        cache = DiskCache(tmp_path / "cache", "fp", {}, token_shape=(4,))
        cache.put(IDS, STORED)
    assert old.read_text() == "keep" and sorted(p.name for p in victim.iterdir()) == [old.name]
    (warning,) = _warnings(caplog)
    assert "cannot write to the embedding cache" in warning and "tmp is a symbolic link" in warning
    assert not cache.writable and cache.readable and cache.get(IDS) is None


def test_a_fingerprint_folder_that_is_a_link_turns_the_cache_off(tmp_path, outside, caplog):
    key = entry_key(IDS)
    (outside / key[:2]).mkdir()
    (outside / f"{key}.emb").rename(outside / key[:2] / f"{key}.emb")
    (tmp_path / "cache").mkdir()
    os.symlink(outside, tmp_path / "cache" / "fp")
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        cache = DiskCache(tmp_path / "cache", "fp", {}, token_shape=(4,))
        assert cache.get(IDS) is None
    (warning,) = _warnings(caplog)
    assert "cannot make the embedding cache" in warning and "is a symbolic link" in warning
    assert not cache.readable and not cache.writable
