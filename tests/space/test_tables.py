"""fastbertscore.space.tables and api: every number says raw or rescaled, scores come before texts, and each mean
sits next to the hash code of its own kind."""

from __future__ import annotations

import pytest
import torch
from tolerances import assert_close, fp32

import fastbertscore as fb
from fastbertscore import space

CANDS = ["The cat sat on the mat.", "It is raining in Paris today, said the weather service."]
REFS = [["A cat was sitting on the mat."], ["Rain is falling in Paris.", "It rains in Paris today."]]


@pytest.fixture(scope="module")
def rescaling():
    return fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True)


@pytest.fixture(scope="module")
def raw():
    return fb.BERTScorer(model_type=fb.DEFAULT_MODEL)


def test_pair_table_has_a_labelled_row_per_kind(rescaling, raw):
    result = rescaling.score_result(CANDS[1:], REFS[1:])
    header, rows = space.pair_table(result)
    assert header == ["scores", "P", "R", "F1"] and [r[0] for r in rows] == ["raw", "rescaled"]
    assert_close(
        [rows[0][1:], rows[1][1:]],
        [[float(x[0]) for x in result.raw], [float(x[0]) for x in result.rescaled]],
        0.5e-6,
        "rounded to 6 digits",
    )
    only_raw = raw.score_result(CANDS[1:], REFS[1:])
    assert [r[0] for r in space.pair_table(only_raw)[1]] == ["raw"]
    assert_close(space.pair_table(only_raw)[1][0][1:], rows[0][1:], fp32() + 1e-6, "the raw row is the same either way")


def test_batch_table_puts_scores_first_and_labels_each_kind(rescaling):
    result = rescaling.score_result(CANDS, REFS)
    groups = [list(g) for g in REFS]
    header, rows = space.batch_table(CANDS, groups, result)
    assert header == [
        "#",
        "P (raw)",
        "R (raw)",
        "F1 (raw)",
        "P (rescaled)",
        "R (rescaled)",
        "F1 (rescaled)",
        "best ref for P",
        "best ref for R",
        "best ref for F1",
        "candidate",
        "reference",
    ]
    assert [r[0] for r in rows] == [1, 2] and rows[1][-2:] == [CANDS[1], " | ".join(REFS[1])]
    stacked = torch.stack([*result.raw, *result.rescaled], dim=-1)
    assert_close([r[1:7] for r in rows], stacked, 0.5e-6, "scores rounded to 6 digits")
    assert [r[7:10] for r in rows] == [[int(i) + 1 for i in s] for s in torch.stack(result.best_reference, dim=-1)]


def test_batch_summary_pairs_each_mean_with_its_own_hash(rescaling, raw):
    # Raw means stood beside a hash ending -rescaled_baseline=...
    result = rescaling.score_result(CANDS, REFS)
    lines = space.batch_summary(result, rescaling.signature).split("  \n")
    assert lines[0] == "**2 pairs**"
    assert lines[1].startswith("mean raw P ") and lines[1].endswith(f"`{raw.hash}`") and "rescaled" not in lines[1]
    assert lines[2].startswith("mean rescaled P ") and lines[2].endswith(f"`{rescaling.hash}`")
    mean_f = float(result.rescaled[2].double().mean())
    assert f"F1 {mean_f:.4f}" in lines[2]
    plain = space.batch_summary(raw.score_result(CANDS, REFS), raw.signature).split("  \n")
    assert len(plain) == 2 and plain[1].endswith(f"`{raw.hash}`")


@pytest.mark.parametrize("rescale", [True, False])
def test_compare_table_and_summary_say_which_kind(rescale):
    systems = {"A": ["The cat sat on the mat.", "It rains."], "B": ["A dog ran.", "It is raining."]}
    refs = ["A cat was sitting on the mat.", "Rain is falling."]
    result = fb.compare(
        systems, refs, model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=rescale, n_samples=50
    )
    which = "rescaled" if rescale else "raw"
    header, rows = space.compare_table(result, rescale)
    assert header == [
        "system",
        f"P ({which})",
        "P ± 95%",
        f"R ({which})",
        "R ± 95%",
        f"F1 ({which})",
        "F1 ± 95%",
        "p-value",
    ]
    assert rows[0][0] == "A (baseline)" and rows[1][0] == "B"
    assert rows[1][5] == f"{result.systems[1].scores[2]:.4f}" and rows[1][-1] == result.systems[1].marked_p_value
    summary = space.compare_summary(result, len(refs), rescale)
    assert ("rescaled with the baseline" in summary) == rescale and ("raw (not rescaled)" in summary) != rescale
    assert result.signature in summary and ("r:baseline" in result.signature) == rescale
    chart = space.f1_chart(result, rescale)
    assert chart.axes[0].get_ylabel() == f"F1 ({which}), 95% CI"


def test_histogram_says_which_kind():
    fig = space.histogram([0.1, 0.5, 0.9], True)
    assert fig.axes[0].get_xlabel() == "F1 (rescaled)" and sum(p.get_height() for p in fig.axes[0].patches) == 3
    assert space.histogram([0.5], False).axes[0].get_xlabel() == "F1 (raw)"


def test_counted_note_and_highlight(raw):
    one = raw.score_result(CANDS[:1], REFS[:1])
    assert space.counted_note(one, 1) == "**Reference 1 of 1** counted for P, R and F."
    assert space.counted_note(raw.score_result(CANDS[:1], [REFS[0][0]]), 1) == ""  # a plain reference: no note
    e = fb.explain(
        "The president met the minister.", "The president met the prime minister in Paris.", scorer=raw, level="word"
    )
    segments = space.highlight(e.reference, e.reference_units, e.missing_spans)
    assert "".join(text for text, _ in segments) == e.reference
    assert sorted(text for text, label in segments if label == "missing") == sorted(u.text for u in e.missing_spans)
    assert e.missing_spans  # the example must have something to highlight


def test_score_json_is_what_the_scorer_returns(rescaling, raw):
    for scorer in (raw, rescaling):
        result = scorer.score_result(CANDS[1:], REFS[1:])
        out = space.score_json(result)
        assert list(out) == ["precision", "recall", "f1", "best_reference", "hashcode"]
        assert [out["precision"], out["recall"], out["f1"]] == [float(x[0]) for x in result.scores]
        assert out["best_reference"] == {
            k: int(x[0]) for k, x in zip(("precision", "recall", "f1"), result.best_reference, strict=True)
        }
        assert out["hashcode"] == scorer.hash
    assert "best_reference" not in space.score_json(raw.score_result(CANDS[:1], [REFS[0][0]]))


def test_matches_table_labels_the_similarity(rescaling):
    e = fb.explain("The cat sat.", "A cat was sitting.", scorer=rescaling)
    header, rows = space.matches_table(e, True)
    assert header[-1] == "similarity (rescaled)" and len(rows) == len(e.candidate_units)
    assert [r[0] for r in rows] == [u.text for u in e.candidate_units]
    assert [r[2] for r in rows] == [round(u.similarity, 3) for u in e.candidate_units]


@pytest.mark.parametrize(
    "header",
    [
        ["#", "P (raw)", "R (raw)", "F1 (raw)", "candidate", "reference"],
        [
            "#",
            *[f"{c} ({k})" for k in ("raw", "rescaled") for c in "PR"],
            "F1 (raw)",
            "F1 (rescaled)",
            "best ref for P",
            "best ref for R",
            "best ref for F1",
            "candidate",
            "reference",
        ],
    ],
)
def test_column_widths_fill_the_box_and_give_texts_the_most(header):
    widths = [float(w.rstrip("%")) for w in space.column_widths(header)]
    assert len(widths) == len(header) and abs(sum(widths) - 100) < 1e-9
    assert min(widths[-2:]) > max(widths[:-2])


LONG = ("The committee discussed the budget and the plans for next year. " * 62)[:3990]


SYSTEMS = {"A": ["The cat sat on the mat.", "It rains."], "B": ["A dog ran.", "It is raining."]}
SYSTEM_REFS = ["The cat sat on the mat.", "It rains."]  # system A is the references themselves


def test_the_part_past_the_cut_is_marked_and_no_word_is_split(raw):
    # The reference's tail past the cut was shown unmarked, and began inside a word.
    tokens = fb.explain("The committee discussed the budget.", LONG, scorer=raw, level="token")
    words, missed = space.reference_words(tokens, False)
    assert space.is_cut(raw, LONG) and not space.is_cut(raw, "A short text.")
    segments = space.highlight(LONG, words, missed, raw.token_limit)
    assert "".join(text for text, _ in segments) == LONG
    label = f"not scored (past the model's {raw.token_limit} tokens)"
    tail = [k for k, (_, lab) in enumerate(segments) if lab == label]
    assert tail == [len(segments) - 1]  # one segment, the last
    start = len(LONG) - len(segments[-1][0])
    assert LONG[start].isspace() and not LONG[start - 1].isspace()  # it starts between words, never inside one
    scored_words = LONG[:start].split()
    assert all(w in LONG.split() for w in scored_words)  # every word shown as scored is a whole word
    # A text that was not cut has no such segment.
    short = fb.explain("The cat sat.", "The cat sat on the mat.", scorer=raw, level="token")
    assert all(lab != label for _, lab in space.highlight(short.reference, *space.reference_words(short, False)))


def test_compare_numbers_keep_their_precision_and_no_test_is_named_when_none_ran():
    # A perfect system read 1 and 0; with no test the signature said "resamples:1000".
    result = fb.compare(SYSTEMS, SYSTEM_REFS, model_type=fb.DEFAULT_MODEL, test=None, n_samples=50)
    _, rows = space.compare_table(result, False)
    assert rows[0][1:7] == ["1.0000", "0.0000", "1.0000", "0.0000", "1.0000", "0.0000"]  # A is the references
    summary = space.compare_summary(result, len(REFS), False)
    assert "test:" not in summary and "resamples:" not in summary and "*" not in summary
    assert result.scores_signature in summary and "No test was run" in summary and "50 bootstrap resamples" in summary
    tested = fb.compare(SYSTEMS, REFS, model_type=fb.DEFAULT_MODEL, test="bs", n_samples=50)
    assert tested.signature in space.compare_summary(tested, len(REFS), False)


def test_each_table_knows_its_columns_before_a_run(raw):
    # The builders and the empty tables share these.
    result = raw.score_result(SYSTEM_REFS, [[r, "Another one."] for r in SYSTEM_REFS])
    assert space.pair_table(result)[0] == space.PAIR_HEADER == ["scores", "P", "R", "F1"]
    assert space.batch_table(SYSTEM_REFS, [[r, "Another one."] for r in SYSTEM_REFS], result)[0] == space.batch_header(
        False, True
    )
    assert space.compare_header(True)[1] == "P (rescaled)" and space.matches_header(False)[2] == "similarity (raw)"
