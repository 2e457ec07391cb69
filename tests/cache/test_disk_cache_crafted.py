"""Crafted and random cache files: whatever bytes sit under an entry's name, the cache gives back the embedding
that was stored there or nothing (a miss, recomputed); no exception escapes and no number changes."""

from __future__ import annotations

import hashlib
import json
import os
import struct

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import MINILM
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.cache.disk import MAX_HEADER_BYTES, DiskCache, entry_bytes, entry_key, parse_entry

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
IDS = [101, 2023, 2003, 102]
WIDTH = 6
_RAW = torch.arange(1, len(IDS) * WIDTH + 1, dtype=torch.float32).reshape(len(IDS), WIDTH)
STORED = _RAW / _RAW.norm(dim=-1, keepdim=True)  # unit length per token, as every stored embedding is
KEY = entry_key(IDS)
PAYLOAD = STORED.numpy().tobytes()
SHA = hashlib.sha256(PAYLOAD).hexdigest()
MAGIC = entry_bytes(STORED, KEY)[:8]


def _entry(header: bytes, payload: bytes = PAYLOAD, size: int | None = None) -> bytes:
    return MAGIC + struct.pack("<I", len(header) if size is None else size) + header + payload


def _header(**fields) -> bytes:
    return json.dumps({"key": KEY, "shape": [len(IDS), WIDTH], "sha256": SHA, **fields}).encode()


CRAFTED = {
    "infinite dimension": _header(shape=[float("inf"), WIDTH]),  # json.dumps writes Infinity
    "NaN dimension": _header(shape=[float("nan"), WIDTH]),
    "negative dimensions": _header(shape=[-len(IDS), -WIDTH]),  # their product is right: reshape would raise
    "float dimensions": _header(shape=[float(len(IDS)), float(WIDTH)]),
    "bool dimension": _header(shape=[len(IDS), WIDTH, True]),
    "wrong rank": _header(shape=[len(IDS) * WIDTH]),
    "another width": _header(shape=[len(IDS) * 2, WIDTH // 2]),
    "huge dimensions": _header(shape=[10**30, WIDTH]),
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "nested within the limit": b"[" * 500 + b"]" * 500,
    "another text's key": _header(key=entry_key([101, 102])),
    "no key": json.dumps({"shape": [len(IDS), WIDTH], "sha256": SHA}).encode(),
    "not an object": b"[4, 6]",
    "not UTF-8": b'{"key": "\xff\xfe"}',
    "null": b"null",
}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_headers_are_refused_with_a_reason(name):
    embedding, problem = parse_entry(_entry(CRAFTED[name]), key=KEY, tokens=len(IDS), token_shape=(WIDTH,))
    assert embedding is None and problem


def test_header_size_and_non_finite_values_are_bounded():
    header = _header()
    assert parse_entry(_entry(header), key=KEY, tokens=len(IDS), token_shape=(WIDTH,))[0] is not None
    huge = parse_entry(_entry(header, size=2**32 - 1), key=KEY, tokens=len(IDS), token_shape=(WIDTH,))
    assert huge == (None, f"a header of {2**32 - 1} bytes (at most {MAX_HEADER_BYTES})")
    nan = STORED.clone()
    nan[1, 2] = float("nan")
    problem = parse_entry(entry_bytes(nan, KEY), key=KEY, tokens=len(IDS), token_shape=(WIDTH,))[1]
    assert problem == "values that are not finite"


def test_a_sound_entry_of_other_lengths_is_refused():
    """A file with the right key, shape and checksum whose vectors are not unit length (planted by hand) would move
    every score it enters: refused like any damaged entry."""
    for scale in (1000.0, 0.5, 0.0):
        problem = parse_entry(entry_bytes(STORED * scale, KEY), key=KEY, tokens=len(IDS), token_shape=(WIDTH,))[1]
        assert problem == "token vectors that are not of unit length"


@pytest.mark.parametrize("kind", ["a named pipe", "a folder"])
def test_something_other_than_a_file_in_an_entrys_place_is_a_miss_and_never_blocks(tmp_path, kind, caplog):
    cache = DiskCache(tmp_path, "fingerprint", {}, token_shape=(WIDTH,))
    path = cache.path_for(IDS)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "a named pipe":
        os.mkfifo(path)  # opening it for reading the usual way waits for a writer, for ever
    else:
        path.mkdir()
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        assert cache.get(IDS) is None
    assert "is not a regular file" in caplog.text
    assert cache.readable, "one odd entry costs that entry, not the cache"


# -- property: random and crafted files under an entry's name -------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
dimension = st.one_of(
    st.sampled_from([len(IDS), WIDTH, 0, -1, -len(IDS), 10**30, float("inf"), float("nan"), 4.0, True]),
    st.integers(),
    st.floats(),
)
header_fields = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from([KEY, entry_key([101, 102]), ""]) | json_values,
        "shape": st.lists(dimension, max_size=4) | json_values,
        "sha256": st.sampled_from([SHA, hashlib.sha256(b"").hexdigest()]) | json_values,
        "extra": json_values,
    },
)
headers = st.one_of(
    header_fields.map(lambda h: json.dumps(h).encode()),
    st.binary(max_size=200),
    st.sampled_from(list(CRAFTED.values())),
)
payloads = st.one_of(st.just(PAYLOAD), st.binary(max_size=200), st.just(PAYLOAD[:-4]), st.just(PAYLOAD + b"\x00"))
sizes = st.one_of(st.none(), st.integers(0, 2**32 - 1))
files = st.one_of(
    st.builds(_entry, headers, payloads, sizes),
    st.binary(max_size=300),
    st.builds(lambda data, cut: data[:cut], st.just(entry_bytes(STORED, KEY)), st.integers(0, 200)),
)


@FUZZ
@given(data=files)
def test_no_file_makes_the_decoder_raise_or_return_other_numbers(data):
    embedding, problem = parse_entry(data, key=KEY, tokens=len(IDS), token_shape=(WIDTH,))
    if embedding is None:
        assert isinstance(problem, str) and problem
    else:
        assert problem is None and torch.equal(embedding, STORED)  # only the stored numbers come back


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return DiskCache(tmp_path_factory.mktemp("crafted"), "fingerprint", {}, token_shape=(WIDTH,))


@FUZZ
@given(data=files)
def test_no_file_under_an_entrys_name_makes_the_cache_raise_or_change_a_number(cache, data):
    path = cache.path_for(IDS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    found = cache.get(IDS)
    assert found is None or torch.equal(found, STORED)
    if found is None:
        assert not path.exists()  # removed, so the next put writes it again
        cache.put(IDS, STORED)
        assert torch.equal(cache.get(IDS), STORED)


@pytest.mark.parametrize(
    "craft",
    ["infinite dimension", "negative dimensions", "deep nesting", "another text's key", "huge header", "scaled"],
)
def test_crafted_entries_in_a_real_cache_are_refused_and_the_scores_do_not_move(mt_pairs, tmp_path, craft, caplog):
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    expected = scorer.score(cands, refs)
    ids = scorer.tokenizer(refs[0])["input_ids"]
    path = scorer.disk_cache.path_for(ids)
    data = path.read_bytes()
    size = struct.unpack_from("<I", data, 8)[0]
    header, payload = json.loads(data[12 : 12 + size]), data[12 + size :]
    if craft == "another text's key":  # a valid file of another text, copied under this one's name
        crafted = scorer.disk_cache.path_for(scorer.tokenizer(cands[0])["input_ids"]).read_bytes()
    elif craft == "huge header":
        crafted = data[:8] + struct.pack("<I", 2**32 - 1) + data[12:]
    elif craft == "scaled":  # every check but the vectors' length passes: key, shape, checksum, finite values
        scaled = (torch.frombuffer(bytearray(payload), dtype=torch.float32) * 1000).numpy().tobytes()
        raw = json.dumps({**header, "sha256": hashlib.sha256(scaled).hexdigest()}).encode()
        crafted = data[:8] + struct.pack("<I", len(raw)) + raw + scaled
    elif craft == "deep nesting":
        crafted = data[:8] + struct.pack("<I", 2000) + b"[" * 1000 + b"]" * 1000 + payload
    else:
        shape = [float("inf"), header["shape"][1]] if craft == "infinite dimension" else [-x for x in header["shape"]]
        raw = json.dumps({**header, "shape": shape}).encode()
        crafted = data[:8] + struct.pack("<I", len(raw)) + raw + payload
    path.write_bytes(crafted)
    fresh = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path)
    with caplog.at_level("WARNING", logger="fastbertscore.cache.disk"):
        assert_scores_close(fresh.score(cands, refs), expected)
    assert fresh.disk_cache.corrupted == 1 and "is corrupted" in caplog.text
    assert fb.BERTScorer(model_type=MINILM, num_layers=4, cache_dir=tmp_path).disk_cache.get(ids) is not None
