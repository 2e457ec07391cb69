"""Property tests over generated text (hypothesis, fixed seed and budget; FUZZ_EXAMPLES=N for a longer run)."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, f_bound, fp32

import fastbertscore as fb

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
TINY = {"width": TINY_WIDTH, "tokens": MAX_LEN}  # the policy's bound for the tiny model these tests use
BOUND = fp32(**TINY)
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))

# Arbitrary Unicode (no lone surrogates, which cannot be encoded), plus the awkward cases named in the issue.
awkward = st.sampled_from(
    [
        "",
        "   ",
        "\t\n",
        "\u200b",
        "e\u0301\u0301\u0301",
        "😀👍🏽🇫🇷",
        "مرحبا بالعالم",
        "שלום עולם",
        "x" * 300,
        "Ünïcödé naïve café",
        "東京で会いましょう。",
        "\x00\x07 control",
        "a\u202eb",
        "A" + "\u0300" * 30,
    ]
)
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
        assert torch.isfinite(x).all() and (x.abs() <= 1 + BOUND).all()
    P2, R2, F2 = scorer.score(refs, cands)
    assert_scores_close((R2, P2, F2), (P, R, F), **TINY)


@FUZZ
@given(text=texts)
def test_identical_texts_score_one(scorer, text):
    _P, _R, F = scorer.score([text], [text])
    expected = 1.0 if _has_content(scorer, text) else 0.0
    assert_close(F, [expected], 2 * BOUND, "F of identical texts")


@FUZZ
@given(cands=st.lists(texts, min_size=2, max_size=6), refs=st.lists(texts, min_size=6, max_size=6))
def test_batch_and_order_do_not_matter(scorer, cands, refs):
    refs = refs[: len(cands)]
    together = torch.stack(scorer.score(cands, refs))
    reversed_ = torch.stack(scorer.score(cands[::-1], refs[::-1])).flip(-1)
    alone = torch.stack([torch.stack(scorer.score([c], [r]))[:, 0] for c, r in zip(cands, refs, strict=True)], dim=-1)
    assert_scores_close(reversed_, together, **TINY, what="reversed: ")
    assert_scores_close(alone, together, **TINY, what="one pair at a time: ")


@FUZZ
@given(cand=texts, refs=st.lists(texts, min_size=1, max_size=4))
def test_multi_reference_is_the_best_single_reference(scorer, cand, refs):
    best = torch.stack(scorer.score([cand], [refs]))[:, 0]
    singles = torch.stack(scorer.score([cand] * len(refs), refs))
    expected = singles.max(dim=1).values
    assert_close(best[:2], expected[:2], BOUND, "best P and R")
    top = int(singles[2].argmax())  # F's bound depends on the P and R of the reference that gave it
    assert_close(best[2], expected[2], f_bound(singles[0, top], singles[1, top], **TINY).item(), "best F")


@FUZZ
@given(cand=texts, ref=texts, level=st.sampled_from(["token", "word", "sentence"]))
def test_explain_offsets_slice_the_original_strings(scorer, cand, ref, level):
    e = fb.explain(cand, ref, scorer=scorer, level=level)
    for text, units in ((cand, e.candidate_units), (ref, e.reference_units)):
        for u in units:
            assert 0 <= u.start <= u.end <= len(text) and text[u.start : u.end] == u.text


@FUZZ
@given(
    good=st.lists(texts, min_size=1, max_size=4),
    bad=st.sampled_from([None, 3, 2.5, b"bytes", ["nested"]]),
    where=st.integers(min_value=0, max_value=3),
)
def test_bad_items_are_named_by_index(scorer, good, bad, where):
    where = min(where, len(good))
    cands = good[:where] + [bad] + good[where:]
    with pytest.raises(TypeError, match=rf"cands\[{where}\] is "):
        scorer.score(cands, ["r"] * len(cands))
