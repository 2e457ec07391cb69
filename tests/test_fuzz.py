"""Property tests over generated text (hypothesis, fixed seed and budget; FUZZ_EXAMPLES=N for a longer run)."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastbertscore as fb

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
TOL = 1e-5

# Arbitrary Unicode (no lone surrogates, which cannot be encoded), plus the awkward cases named in the issue.
awkward = st.sampled_from([
    "", "   ", "\t\n", "\u200b", "e\u0301\u0301\u0301", "😀👍🏽🇫🇷", "مرحبا بالعالم", "שלום עולם", "x" * 300,
    "Ünïcödé naïve café", "東京で会いましょう。", "\x00\x07 control", "a\u202eb", "A" + "\u0300" * 30,
])
texts = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60), awkward)


@pytest.fixture(scope="module")
def scorer(tiny_model):
    return fb.BERTScorer(model_type=tiny_model("bert"), num_layers=2, batch_size=4)


def _has_content(scorer, text: str) -> bool:
    ids = scorer.tokenizer(text.strip())["input_ids"]
    return len(ids) > scorer.tokenizer.num_special_tokens_to_add()


@FUZZ
@given(cands=st.lists(texts, min_size=1, max_size=5), refs=st.lists(texts, min_size=5, max_size=5))
def test_scores_are_finite_bounded_and_symmetric(scorer, cands, refs):
    refs = refs[: len(cands)]
    P, R, F = scorer.score(cands, refs)
    for x in (P, R, F):
        assert torch.isfinite(x).all() and (x.abs() <= 1 + TOL).all()
    P2, R2, _ = scorer.score(refs, cands)
    assert torch.allclose(P, R2, atol=TOL) and torch.allclose(R, P2, atol=TOL)


@FUZZ
@given(text=texts)
def test_identical_texts_score_one(scorer, text):
    P, R, F = scorer.score([text], [text])
    expected = 1.0 if _has_content(scorer, text) else 0.0
    assert F.item() == pytest.approx(expected, abs=TOL)


@FUZZ
@given(cands=st.lists(texts, min_size=2, max_size=6), refs=st.lists(texts, min_size=6, max_size=6))
def test_batch_and_order_do_not_matter(scorer, cands, refs):
    refs = refs[: len(cands)]
    together = torch.stack(scorer.score(cands, refs))
    reversed_ = torch.stack(scorer.score(cands[::-1], refs[::-1])).flip(-1)
    alone = torch.stack([torch.stack(scorer.score([c], [r]))[:, 0] for c, r in zip(cands, refs)], dim=-1)
    assert torch.allclose(together, reversed_, atol=TOL) and torch.allclose(together, alone, atol=TOL)


@FUZZ
@given(cand=texts, refs=st.lists(texts, min_size=1, max_size=4))
def test_multi_reference_is_the_best_single_reference(scorer, cand, refs):
    best = torch.stack(scorer.score([cand], [refs]))[:, 0]
    singles = torch.stack(scorer.score([cand] * len(refs), refs))
    assert torch.allclose(best, singles.max(dim=1).values, atol=TOL)


@FUZZ
@given(cand=texts, ref=texts, level=st.sampled_from(["token", "word", "sentence"]))
def test_explain_offsets_slice_the_original_strings(scorer, cand, ref, level):
    e = fb.explain(cand, ref, scorer=scorer, level=level)
    for text, units in ((cand, e.candidate_units), (ref, e.reference_units)):
        for u in units:
            assert 0 <= u.start <= u.end <= len(text) and text[u.start : u.end] == u.text


@FUZZ
@given(good=st.lists(texts, min_size=1, max_size=4), bad=st.sampled_from([None, 3, 2.5, b"bytes", ["nested"]]),
       where=st.integers(min_value=0, max_value=3))
def test_bad_items_are_named_by_index(scorer, good, bad, where):
    where = min(where, len(good))
    cands = good[:where] + [bad] + good[where:]
    with pytest.raises(TypeError, match=rf"cands\[{where}\] is "):
        scorer.score(cands, ["r"] * len(cands))
