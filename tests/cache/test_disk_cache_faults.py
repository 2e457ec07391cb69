"""A disk cache that cannot be made, read or written (a path under a file, a read-only folder, a full disk, an entry
that is not a file) costs speed, never a score or a crash: one warning, then the call goes on. A cache is private
to its writer (folders 0700, entries 0600) unless FASTBERTSCORE_CACHE_GROUP shares it with a group."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat

import pytest
import torch
from confined import run_confined
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.cache.disk import DiskCache
from fastbertscore.cache.folder import GROUP_MODES, GROUP_VARIABLE, PRIVATE_MODES

CANDS = ["the cat sat on the mat", "it is raining today", "a third candidate here"]
REFS = ["a cat was sitting on the mat", "rain is falling", "the third reference"]
NEW = ["a text no run has embedded yet"]  # a miss: its entry must be written, or not, without a crash

#: A child that scores the texts without a cache, then with each cache of a JSON list in turn, and says what each
#: cache saw; before each, a line ``cache N`` on stderr, so that each cache's warnings can be told apart.
SCORE_WITH_CACHE = """
import json, logging, sys
import fastbertscore as fb
model, cache_dirs = sys.argv[1], json.loads(sys.argv[2])
cands, refs = json.loads(sys.argv[3]), json.loads(sys.argv[4])
logging.basicConfig(format="%(levelname)s %(name)s %(message)s")
plain = fb.BERTScorer(model_type=model, num_layers=2).score(cands, refs)
confine()
seen = []
for n, cache_dir in enumerate(cache_dirs):
    print(f"cache {n}", file=sys.stderr, flush=True)
    scorer = fb.BERTScorer(model_type=model, num_layers=2, cache_dir=cache_dir)
    got = scorer.score(cands, refs)
    disk = scorer.disk_cache
    seen.append({"plain": [x.tolist() for x in plain], "got": [x.tolist() for x in got], "hits": disk.hits,
                 "corrupted": disk.corrupted, "readable": disk.readable, "writable": disk.writable})
print(json.dumps(seen))
"""


def _each_cache(stderr: str) -> list[str]:
    """The child's stderr after each ``cache N`` line: what each cache of its list logged."""
    return re.split(r"^cache \d+$", stderr, flags=re.MULTILINE)[1:]


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "fastbertscore.cache.disk" and r.levelname == "WARNING"]


def _cache_warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("WARNING fastbertscore.cache.disk")]


def _scores(out: dict, key: str) -> torch.Tensor:
    return torch.tensor(out[key])


def test_a_cache_dir_that_cannot_be_made_warns_once_and_scores_the_same(tiny_model, tmp_path, caplog):
    model = tiny_model("bert")
    (tmp_path / "a-file").write_text("x")
    expected = fb.BERTScorer(model_type=model, num_layers=2).score(CANDS, REFS)
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        scorer = fb.BERTScorer(model_type=model, num_layers=2, cache_dir=tmp_path / "a-file" / "embeddings")
        got = scorer.score(CANDS, REFS)
        scorer.score(CANDS + NEW, REFS + NEW)
    assert_scores_close(got, expected)
    (warning,) = _warnings(caplog)  # one, for the scorer's life
    assert "cannot make the embedding cache" in warning and "going on without it" in warning
    assert not scorer.disk_cache.readable and not scorer.disk_cache.writable


def test_an_entry_that_cannot_be_read_turns_the_cache_off(tiny_model, tmp_path, caplog):
    model = tiny_model("bert")
    first = fb.BERTScorer(model_type=model, num_layers=2, cache_dir=tmp_path)
    expected = first.score(CANDS, REFS)
    path = first.disk_cache.path_for(first.tokenizer(REFS[0])["input_ids"])
    shutil.rmtree(path.parent)
    path.parent.write_text("")  # a file where the entry's folder was: opening the entry raises NotADirectoryError
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        again = fb.BERTScorer(model_type=model, num_layers=2, cache_dir=tmp_path)
        assert_scores_close(again.score(CANDS, REFS), expected)
    (warning,) = _warnings(caplog)
    assert "cannot read the embedding cache" in warning and not again.disk_cache.readable


@pytest.mark.slow
def test_a_full_disk_warns_once_and_scores_the_same(tiny_model, tmp_path):
    (out,), stderr = run_confined(
        SCORE_WITH_CACHE,
        tiny_model("bert"),
        json.dumps([str(tmp_path / "embeddings")]),
        json.dumps(CANDS),
        json.dumps(REFS),
        max_file_bytes=0,  # every write of a byte fails with EFBIG, as on a full disk
    )
    assert_scores_close(_scores(out, "got"), _scores(out, "plain"))
    (warning,) = _cache_warnings(stderr)
    assert "cannot write to the embedding cache" in warning and "File too large" in warning
    assert out["readable"] and not out["writable"]
    assert not list((tmp_path / "embeddings").rglob("*.tmp"))  # a failed write leaves no temporary file


def _read_only(folder) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)


def _writable(folder) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.slow
def test_a_read_only_cache_is_read_and_a_damaged_entry_in_it_costs_no_crash(tiny_model, tmp_path):
    model, cache = tiny_model("bert"), tmp_path / "embeddings"
    scorer = fb.BERTScorer(model_type=model, num_layers=2, cache_dir=cache)
    scorer.score(CANDS, REFS)
    damaged = scorer.disk_cache.path_for(scorer.tokenizer(CANDS[0])["input_ids"])
    damaged.write_bytes(damaged.read_bytes()[:-8])  # truncated: it must be deleted, and cannot be
    _read_only(cache)
    try:  # one child meets the read-only cache, then makes a new one under it
        (out, made), stderr = run_confined(
            SCORE_WITH_CACHE,
            model,
            json.dumps([str(cache), str(cache / "new")]),
            json.dumps(CANDS + NEW),
            json.dumps(REFS + NEW),
            as_ordinary_user=True,
        )
    finally:
        _writable(cache)
    stderr, made_err = _each_cache(stderr)
    assert_scores_close(_scores(out, "got"), _scores(out, "plain"))
    assert out["hits"] == len(set(CANDS) | set(REFS)) - 1 and out["corrupted"] == 1  # the others were read
    assert out["readable"] and not out["writable"] and damaged.exists()
    assert len(_cache_warnings(stderr)) == 2  # the damaged entry, then one for the folder it cannot change
    assert "cannot remove a bad entry from the embedding cache" in _cache_warnings(stderr)[1]
    assert_scores_close(_scores(made, "got"), _scores(made, "plain"))
    (warning,) = _cache_warnings(made_err)
    assert "cannot make the embedding cache" in warning and "Permission denied" in warning


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077], ids=oct)
@pytest.mark.parametrize("shared", [False, True], ids=["private", "shared with a group"])
def test_a_cache_is_private_to_its_writer_or_shared_with_a_group_whatever_the_umask(
    tmp_path, umask, shared, monkeypatch
):
    if shared:
        monkeypatch.setenv(GROUP_VARIABLE, "1")
    old = os.umask(umask)
    try:
        cache = DiskCache(tmp_path / "root", "fingerprint", {"format": 1}, token_shape=(4,))
        cache.put([101, 7, 102], torch.ones(3, 4) / 2)
    finally:
        os.umask(old)
    entry = cache.path_for([101, 7, 102])
    files = [entry, cache.folder / "settings.json"]
    folders = [cache.folder, entry.parent, cache.folder / "tmp"]
    folder_mode, entry_mode = GROUP_MODES if shared else PRIVATE_MODES
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {entry_mode}  # never readable by the world
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {folder_mode}
    assert (folder_mode, entry_mode) == ((0o770, 0o640) if shared else (0o700, 0o600))
    assert stat.S_IMODE((tmp_path / "root").stat().st_mode) == 0o777 & ~umask  # cache_dir itself is the user's


def test_an_older_world_readable_folder_of_ones_own_is_made_private_when_opened(tmp_path):
    folder = tmp_path / "fingerprint"
    folder.mkdir()
    folder.chmod(0o755)  # as an earlier version made it
    DiskCache(tmp_path, "fingerprint", {}, token_shape=(4,))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to hand files to another user")
@pytest.mark.parametrize("shared", [False, True], ids=["private", "shared with a group"])
def test_a_cache_another_user_wrote_is_read_only_when_shared_with_a_group(tiny_model, tmp_path, shared, monkeypatch):
    if shared:
        monkeypatch.setenv(GROUP_VARIABLE, "1")  # the writer's and the reader's setting (the child inherits it)
    model, cache = tiny_model("bert"), tmp_path / "embeddings"
    fb.BERTScorer(model_type=model, num_layers=2, cache_dir=cache).score(CANDS, REFS)
    for path in cache.rglob("*"):  # as if user "nobody" had written it; the reader is in its group when shared
        os.chown(path, 65534, os.getgid() if shared else 65534)
    (out,), stderr = run_confined(
        SCORE_WITH_CACHE,
        model,
        json.dumps([str(cache)]),
        json.dumps(CANDS + NEW),
        json.dumps(REFS + NEW),
        as_ordinary_user=True,
    )
    assert_scores_close(_scores(out, "got"), _scores(out, "plain"))
    if shared:  # the group reads every entry and adds its own
        assert out["hits"] == len(set(CANDS) | set(REFS)) and out["readable"] and out["writable"]
        assert _cache_warnings(stderr) == []
    else:  # another user's private cache: one warning, then no cache
        assert out["hits"] == 0 and not out["readable"] and not out["writable"]
        (warning,) = _cache_warnings(stderr)
        assert "cannot read the embedding cache" in warning and f"private to its owner; see {GROUP_VARIABLE}" in warning
