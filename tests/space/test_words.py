"""fastbertscore.space.words: the reference's words from one token-level explanation equal explain(level="word")."""

from __future__ import annotations

import pytest
from tolerances import fp32

import fastbertscore as fb
from fastbertscore.space import reference_words

PAIRS = [
    (
        "The president met the minister in Paris.",
        "The president met the prime minister in Paris and signed a trade deal.",
    ),
    ("An unbelievably cold night in Zurich.", "It was an unbelievably cold night in Zürich, said the weather service."),
    ("The committee discussed the budget and the plans for next year. " * 8, "The committee discussed the budget."),
]


@pytest.fixture(scope="module", params=["plain", "idf", "rescaled"])
def scorer(request):
    options = {"idf": True, "idf_sents": [r for _, r in PAIRS]} if request.param == "idf" else {}
    if request.param == "rescaled":
        options = {"lang": "en", "rescale_with_baseline": True}
    return fb.BERTScorer(model_type=fb.DEFAULT_MODEL, **options)


@pytest.mark.parametrize("cand, ref", PAIRS)
def test_words_and_missed_words_equal_the_word_level_explanation(scorer, cand, ref):
    tokens = fb.explain(cand, ref, scorer=scorer, level="token")
    words = fb.explain(cand, ref, scorer=scorer, level="word")
    ours, missed = reference_words(tokens, scorer.rescale_with_baseline)
    assert [(u.text, u.start, u.end, u.match) for u in ours] == [
        (u.text, u.start, u.end, u.match) for u in words.reference_units
    ]
    for a, b in zip(ours, words.reference_units, strict=True):
        assert abs(a.similarity - b.similarity) <= fp32() and abs(a.weight - b.weight) <= fp32() * max(1.0, b.weight)
    # Which words are missing is a pick: compared exactly where no word lies within rounding of the threshold.
    assert all(abs(u.similarity - words.threshold) > fp32() for u in words.reference_units)
    assert [(u.start, u.end) for u in missed] == [(u.start, u.end) for u in words.missing_spans]
    if "Zürich" in ref:  # "Zürich" and "unbelievably" are several pieces each: words do merge them
        assert len(ours) < len(tokens.reference_units)


def test_a_word_level_explanation_is_refused():
    e = fb.explain("a b", "a c", model_type=fb.DEFAULT_MODEL, level="word")
    with pytest.raises(ValueError, match="needs a token-level explanation"):
        reference_words(e, False)
