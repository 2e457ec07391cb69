"""explain(): offsets slice the original strings, omissions show up as missing spans."""

from __future__ import annotations

import pytest
from tolerances import assert_close, assert_scores_close, fp32, prf_bounds

import fastbertscore as fb
from fastbertscore.explanations.explanation import THRESHOLDS, explain, split_sentences
from fastbertscore.explanations.plot import similarity_figure

REF = "The president met the prime minister in Paris on Monday, and they signed a new trade agreement."
CAND = "The president met the prime minister in Paris on Monday."


@pytest.fixture(scope="module")
def scorer():
    return fb.BERTScorer(model_type=fb.DEFAULT_MODEL)


@pytest.mark.parametrize("level", ["token", "word"])
def test_omitted_clause_is_missing(scorer, level):
    e = explain(CAND, REF, level=level, scorer=scorer)
    missing = " ".join(u.text for u in e.missing_spans)
    for word in ("signed", "trade", "agreement"):
        assert word in missing
    for word in ("president", "Paris", "Monday"):
        assert word not in missing
    assert not e.extra_spans


def test_omitted_sentence_is_missing(scorer):
    ref = "The weather was sunny. The president met the prime minister in Paris. Stock prices fell sharply on Wall Street."
    e = explain("The president met the prime minister in Paris.", ref, level="sentence", scorer=scorer)
    assert [u.text for u in e.reference_units][1] == "The president met the prime minister in Paris."
    assert "Stock prices fell sharply on Wall Street." in [u.text for u in e.missing_spans]
    assert e.reference_units[1].similarity > THRESHOLDS["sentence"]


@pytest.mark.parametrize("level", ["token", "word", "sentence"])
def test_identical_texts_have_no_missing_spans(scorer, level):
    e = explain(REF, REF, level=level, scorer=scorer)
    assert e.missing_spans == [] and e.extra_spans == []
    assert_close(e.f1, 1.0, prf_bounds()[2], "F1 of identical texts")


@pytest.mark.parametrize("level", ["token", "word", "sentence"])
def test_offsets_slice_the_original_strings(scorer, level):
    cand = "  Café naïve à Zürich — 東京で会いましょう。 Emoji 😀👍🏽 unbelievably long-winded!  "
    ref = "\tThe café in Zürich; 東京。Naïve people 😀 wrote it. "
    e = explain(cand, ref, level=level, scorer=scorer)
    for text, units in ((cand, e.candidate_units), (ref, e.reference_units)):
        assert units
        for u in units:
            assert text[u.start : u.end] == u.text
            assert u.text == u.text.strip() or level == "token"
    if level == "word":
        assert "unbelievably" in [u.text for u in e.candidate_units] and "Zürich" in [u.text for u in e.reference_units]


def test_scores_and_matrix_agree_with_score(scorer):
    e = explain(CAND, REF, level="token", scorer=scorer)
    P, R, F = scorer.score([CAND], [REF])
    assert_scores_close([[e.precision], [e.recall], [e.f1]], (P, R, F))
    assert e.similarity.shape == (len(e.candidate_units), len(e.reference_units))
    # A unit's best match is over all tokens of the other side (special ones too), the matrix shows content tokens.
    column_best = e.similarity.max(dim=0).values
    for j, unit in enumerate(e.reference_units):
        assert unit.similarity >= float(column_best[j]) - fp32()
        if unit.match is not None:
            assert_close(e.similarity[unit.match, j], unit.similarity, fp32(), f"similarity of unit {j}")
    fig = similarity_figure(e)
    assert fig.axes[0].images[0].get_array().shape == tuple(e.similarity.shape)


def test_rescaled_similarities_use_the_f_baseline(tmp_path):
    baseline = tmp_path / "b.tsv"
    baseline.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.2,0.3,0.4\n" for i in range(7)))
    raw = explain(CAND, REF, model_type=fb.DEFAULT_MODEL, num_layers=4)
    res = explain(
        CAND,
        REF,
        model_type=fb.DEFAULT_MODEL,
        num_layers=4,
        lang="en",
        rescale_with_baseline=True,
        baseline_path=str(baseline),
    )
    assert res.threshold == 0.3 and raw.threshold == 0.5
    for a, b in zip(raw.reference_units, res.reference_units, strict=True):
        assert_close(b.similarity, (a.similarity - 0.4) / 0.6, fp32() / (1 - 0.4), "rescaled similarity")


def test_bad_arguments(scorer):
    with pytest.raises(ValueError, match="level='phrase' is not one of token, word, sentence"):
        explain("a", "b", level="phrase", scorer=scorer)
    with pytest.raises(TypeError, match="reference must be a string"):
        explain("a", None, scorer=scorer)
    with pytest.raises(ValueError, match="a heatmap needs a token-level explanation"):
        similarity_figure(explain("a b", "a c", level="word", scorer=scorer))


def test_split_sentences():
    text = " One. Two?  Three!Four 東京。最后 "
    assert [text[a:b] for a, b in split_sentences(text)] == ["One.", "Two?", "Three!", "Four 東京。", "最后"]


SENTENCE_REF = (
    "The weather was sunny. The president met the prime minister in Paris. Stock prices fell sharply on Wall Street."
)
SENTENCE_CAND = "The president met the prime minister in Paris. It was warm and bright outside."


def _sentence_scores(candidate: str, reference: str, **options):
    """What score() gives each sentence against the whole other text: (candidate precisions, reference recalls)."""
    c_sents = [candidate[a:b] for a, b in split_sentences(candidate)]
    r_sents = [reference[a:b] for a, b in split_sentences(reference)]
    precision = fb.score(c_sents, [reference] * len(c_sents), **options)[0]
    recall = fb.score([candidate] * len(r_sents), r_sents, **options)[1]
    return precision, recall


def test_rescaled_sentence_level_values_are_score_values_rescaled_once():
    options = {"model_type": fb.DEFAULT_MODEL, "lang": "en", "rescale_with_baseline": True}
    e = explain(SENTENCE_CAND, SENTENCE_REF, level="sentence", **options)
    precision, recall = _sentence_scores(SENTENCE_CAND, SENTENCE_REF, **options)
    bounds = prf_bounds(baseline=fb.BERTScorer(**options).baseline_vals)
    assert_close([u.similarity for u in e.candidate_units], precision, float(bounds[0].max()), "sentence precision")
    assert_close([u.similarity for u in e.reference_units], recall, float(bounds[1].max()), "sentence recall")
    expected_missing = [u.text for u, r in zip(e.reference_units, recall, strict=True) if float(r) < e.threshold]
    assert [u.text for u in e.missing_spans] == expected_missing


@pytest.mark.parametrize("level", ["token", "word", "sentence"])
def test_an_all_layers_scorer_explains_its_own_layer(level):
    options = {"model_type": fb.DEFAULT_MODEL, "num_layers": 4, "lang": "en", "rescale_with_baseline": True}
    every = fb.BERTScorer(**options, all_layers=True)
    one = fb.BERTScorer(**options)
    e = explain(SENTENCE_CAND, SENTENCE_REF, level=level, scorer=every)
    expected = explain(SENTENCE_CAND, SENTENCE_REF, level=level, scorer=one)
    P, R, F = (x[4] for x in every.score([SENTENCE_CAND], [SENTENCE_REF]))
    bounds = prf_bounds(baseline=one.baseline_vals)
    assert_scores_close([[e.precision], [e.recall], [e.f1]], (P, R, F), baseline=one.baseline_vals)
    for side in ("candidate_units", "reference_units"):
        ours, theirs = getattr(e, side), getattr(expected, side)
        assert [(u.text, u.match) for u in ours] == [(u.text, u.match) for u in theirs]
        assert_close(
            [u.similarity for u in ours], [u.similarity for u in theirs], float(max(b.max() for b in bounds)), side
        )
