"""The signature and hash: pinned strings, and settings that give different numbers never share a hash."""

from __future__ import annotations

import collections

import pytest
import torch
import transformers
from paths import MINILM
from tolerances import prf_bounds

import fastbertscore as fb

VERSION = f"version=fastbertscore-{fb.__version__}(hug_trans={transformers.__version__})"
# sha256 of baselines/en/sentence-transformers/all-MiniLM-L6-v2.tsv, first 8 hex digits: a new table is a new hash.
SHIPPED_BASELINE = "d8a9139c"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, f"{MINILM}_L3_no-idf_{VERSION}"),
        ({"num_layers": 5, "use_fast_tokenizer": True}, f"{MINILM}_L5_no-idf_{VERSION}_fast-tokenizer"),
        (
            {"lang": "en", "rescale_with_baseline": True},
            f"{MINILM}_L3_no-idf_{VERSION}-rescaled_baseline={SHIPPED_BASELINE}",
        ),
        (
            {"long_inputs": "window", "window_stride": 64, "dtype": "bfloat16"},
            f"{MINILM}_L3_no-idf_{VERSION}_long=window(stride=64)_dtype=bfloat16",
        ),
        ({"idf": {7592: 2.0, 2045: 1.0}}, f"{MINILM}_L3_idf_{VERSION}_idf=map:3e1a7d73"),
    ],
)
def test_pinned_hash_strings(options, expected):
    scorer = fb.BERTScorer(model_type=MINILM, **options)
    assert scorer.hash == expected
    assert scorer.signature.hash == expected


def test_pinned_long_and_short_signature():
    signature = fb.BERTScorer(model_type=MINILM, lang="en", long_inputs="error").signature
    torch_version = torch.__version__.split("+")[0]
    assert str(signature).startswith(
        f"model:{MINILM}|layer:3|idf:no|rescale:no|lang:en|tokenizer:slow|long_inputs:error|dtype:float32|"
        f"version:{fb.__version__}|transformers:{transformers.__version__}|torch:{torch_version}"
    )
    assert signature.short() == (
        f"m:{MINILM}|l:3|idf:no|r:no|lang:en|tok:slow|long:error|dtype:float32|v:{fb.__version__}|"
        f"hf:{transformers.__version__}|pt:{torch_version}"
    )


def test_the_exported_get_hash_agrees_with_the_scorer():
    scorer = fb.BERTScorer(model_type=MINILM, long_inputs="window", window_stride=32, dtype="bfloat16")
    assert scorer.hash == fb.get_hash(
        MINILM, 3, False, False, False, False, long_inputs="window(stride=32)", dtype="bfloat16"
    )


def test_settings_that_change_numbers_never_share_a_hash(tmp_path, mt_pairs):
    table = "LAYER,P,R,F\n" + "".join(f"{layer},0.3,0.3,0.3\n" for layer in range(7))
    (tmp_path / "a.csv").write_text(table)
    (tmp_path / "b.csv").write_text(table.replace("0.3,0.3,0.3", "0.31,0.3,0.3"))
    variants = {
        "plain": {},
        "stride 32": {"long_inputs": "window", "window_stride": 32},
        "stride 64": {"long_inputs": "window", "window_stride": 64},
        "error mode": {"long_inputs": "error"},
        "bfloat16": {"dtype": "bfloat16"},
        "idf map a": {"idf": {7592: 2.0}},
        "idf map b": {"idf": {7592: 3.0}},
        "baseline a": {"rescale_with_baseline": True, "baseline_path": str(tmp_path / "a.csv")},
        "baseline b": {"rescale_with_baseline": True, "baseline_path": str(tmp_path / "b.csv")},
        "shipped baseline": {"lang": "en", "rescale_with_baseline": True},
    }
    hashes = {name: fb.BERTScorer(model_type=MINILM, **options).hash for name, options in variants.items()}
    assert len(set(hashes.values())) == len(variants), hashes
    # The shipped table is found by lang and named by its content; the custom files are named as custom.
    assert hashes["shipped baseline"].endswith(f"-rescaled_baseline={SHIPPED_BASELINE}")
    assert "custom" not in hashes["shipped baseline"]
    shipped = fb.BERTScorer(model_type=MINILM, **variants["shipped baseline"]).signature
    assert (shipped.rescale, shipped.baseline_digest) == ("baseline", SHIPPED_BASELINE)
    assert "all-MiniLM-L6-v2" in shipped.baseline_source and f"rescale:baseline:{SHIPPED_BASELINE} (" in str(shipped)
    assert all(
        "custom" in hashes[name] and SHIPPED_BASELINE not in hashes[name] for name in ("baseline a", "baseline b")
    )
    # And they really do give different numbers where the texts make it visible.
    cands, refs = mt_pairs[0][:8], mt_pairs[1][:8]
    a = fb.BERTScorer(model_type=MINILM, **variants["baseline a"]).score(cands, refs)[0]
    b = fb.BERTScorer(model_type=MINILM, **variants["baseline b"]).score(cands, refs)[0]
    assert (a - b).abs().max().item() > prf_bounds(baseline=[0.31, 0.3, 0.3])[0].item()  # more than rounding


def test_a_signature_is_typed_fields_written_out_never_parsed_back():
    """Built from fields alone (no scorer): each form is written from them, details the hash ignores included."""
    signature = fb.Signature(
        model="acme/model",
        layer=7,
        idf="map",
        rescale="custom",
        lang=None,
        fast_tokenizer=True,
        long_inputs="window",
        dtype="bfloat16",
        version="9.9",
        transformers="5.0",
        torch="2.13",
        layer_from_registry=True,
        all_layers=True,
        idf_digest="0badf00d",
        baseline_digest="cafe1234",
        baseline_source="/data/my table.csv",
        window_stride=64,
    )
    assert str(signature) == (
        "model:acme/model|layer:7 (registry) (all layers returned)|idf:map:0badf00d|"
        "rescale:custom:cafe1234 (/data/my table.csv)|lang:-|tokenizer:fast|long_inputs:window(stride=64)|"
        "dtype:bfloat16|version:9.9|transformers:5.0|torch:2.13"
    )
    assert signature.short() == (
        "m:acme/model|l:7|idf:map:0badf00d|r:custom:cafe1234|lang:-|tok:fast|long:window(stride=64)|"
        "dtype:bfloat16|v:9.9|hf:5.0|pt:2.13"
    )
    assert signature.hash == fb.get_hash(
        "acme/model",
        7,
        True,
        True,
        True,
        True,
        idf_map="map:0badf00d",
        long_inputs="window(stride=64)",
        dtype="bfloat16",
        baseline="cafe1234",
    )
    raw = signature.raw()
    assert raw.rescale == "no" and raw.baseline_digest is None and "-rescaled" not in raw.hash


def test_an_idf_defaultdict_is_hashed_and_kept_by_its_default_weight_too():
    """Two ``defaultdict`` mappings that differ only in the weight of the tokens they lack give other numbers, so
    they get other hashes, and ``score`` does not reuse the first one's kept scorer for the second; nor for a plain
    mapping of the same items, which weighs no other token (an error, as in a fresh process)."""
    cands, refs = ["The cat sat on the mat.", "It is raining."], ["A cat sat on a mat.", "Rain falls today."]
    token = fb.BERTScorer(model_type=MINILM).tokenizer.convert_tokens_to_ids("cat")
    mappings = [collections.defaultdict(lambda w=w: w, {token: 10.0}) for w in (3.0, 1.0)]
    results = [fb.score(cands, refs, model_type=MINILM, idf=m, return_hash=True) for m in mappings]
    own = [fb.BERTScorer(model_type=MINILM, idf=m, cache_mb=0).score(cands, refs)[2] for m in mappings]
    assert results[0][1] != results[1][1]
    for (scores, _), expected in zip(results, own, strict=True):
        assert torch.equal(scores[2], expected)  # the same scorer code, its own weights: identical
    assert not torch.equal(own[0], own[1])
    with pytest.raises(ValueError, match="no weight for token id"):  # not the defaultdict's kept numbers
        fb.score(cands, refs, model_type=MINILM, idf=dict(mappings[0]))
