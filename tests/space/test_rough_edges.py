"""Issue 39, the Space's last rough edges, where they are about what fastbertscore.space computes: the part of a
text past the model's window, the no-baseline note, the /score endpoint's argument types, the Compare tab's
precision and signature, the tables' columns before a run, and one loaded model for raw and rescaled requests."""

from __future__ import annotations

import pytest

import fastbertscore as fb
from fastbertscore import assembly, space

LONG = ("The committee discussed the budget and the plans for next year. " * 62)[:3990]
SYSTEMS = {"A": ["The cat sat on the mat.", "It rains."], "B": ["A dog ran.", "It is raining."]}
REFS = ["The cat sat on the mat.", "It rains."]


@pytest.fixture(scope="module")
def raw():
    return fb.BERTScorer(model_type=fb.DEFAULT_MODEL)


def test_the_part_past_the_cut_is_marked_and_no_word_is_split(raw):
    # Item 1: the reference's tail past the cut was shown unmarked, and began inside a word.
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


def test_a_language_without_a_baseline_says_what_to_do_in_the_browser():
    # Item 2: the note showed server paths and CLI advice ("--baseline-path", "bertscore-baseline build").
    settings = fb.Settings(model_type=fb.DEFAULT_MODEL, lang="xx")
    scorer, note = space.space_scorer(settings)
    assert not scorer.rescale_with_baseline
    assert "'xx'" in note and "choose another language" in note and "untick 'Also show rescaled scores'" in note
    assert "/" not in note.replace(fb.DEFAULT_MODEL, "") and "--" not in note and "bertscore-" not in note
    assert note.count(". ") <= 1  # the reason, then what to do


@pytest.mark.parametrize(
    "arguments, name, got",
    [
        ({"candidate": ["a", "b"], "reference": "c"}, "candidate", "list"),
        ({"candidate": "a", "reference": 3}, "reference", "int"),
        ({"candidate": "a", "reference": "b", "model": ["m"]}, "model", "list"),
        ({"candidate": "a", "reference": "b", "idf": "yes"}, "idf", "str"),
        ({"candidate": "a", "reference": "b", "num_layers": True}, "num_layers", "bool"),
    ],
)
def test_score_arguments_of_another_type_are_named(arguments, name, got):
    # Item 3: a list as the candidate read "The candidate is empty: type some text".
    with pytest.raises(TypeError, match=rf"argument '{name}' of /score must be .*; got {got} "):
        space.check_score_arguments(**arguments)
    space.check_score_arguments(candidate="a", reference="b", model=None, num_layers=3, lang="en", idf=False)
    with pytest.raises(TypeError, match="The candidate must be a string; got a list"):
        space.check_text(["a"], "The candidate", 100)


def test_compare_numbers_keep_their_precision_and_no_test_is_named_when_none_ran():
    # Item 4: a perfect system read 1 and 0; with no test the signature said "resamples:1000".
    result = fb.compare(SYSTEMS, REFS, model_type=fb.DEFAULT_MODEL, test=None, n_samples=50)
    _, rows = space.compare_table(result, False)
    assert rows[0][1:7] == ["1.0000", "0.0000", "1.0000", "0.0000", "1.0000", "0.0000"]  # A is the references
    summary = space.compare_summary(result, len(REFS), False)
    assert "test:" not in summary and "resamples:" not in summary and "*" not in summary
    assert result.scores_signature in summary and "No test was run" in summary and "50 bootstrap resamples" in summary
    tested = fb.compare(SYSTEMS, REFS, model_type=fb.DEFAULT_MODEL, test="bs", n_samples=50)
    assert tested.signature in space.compare_summary(tested, len(REFS), False)


def test_each_table_knows_its_columns_before_a_run(raw):
    # Item 5 (the page is tested in tests/test_app.py): the builders and the empty tables share these.
    result = raw.score_result(REFS, [[r, "Another one."] for r in REFS])
    assert space.pair_table(result)[0] == space.PAIR_HEADER == ["scores", "P", "R", "F1"]
    assert space.batch_table(REFS, [[r, "Another one."] for r in REFS], result)[0] == space.batch_header(False, True)
    assert space.compare_header(True)[1] == "P (rescaled)" and space.matches_header(False)[2] == "similarity (raw)"


def test_one_loaded_model_serves_raw_and_rescaled_requests(monkeypatch):
    # Item 6: alternating the raw /score endpoint with the rescaled Pair tab built a new scorer, and so a new
    # loaded model (the Embedder, with an empty embedding cache), on every switch.
    builds = []
    build = assembly.build_embedder
    monkeypatch.setattr(assembly, "build_embedder", lambda settings: builds.append(settings) or build(settings))
    fb.clear_model_cache()
    settings = fb.Settings(model_type=fb.DEFAULT_MODEL, lang="en", cache_mb=16)
    embedders, answers = set(), {}
    for rescaled in (False, True, False, True):
        scorer, note = space.space_scorer(settings)
        result = space.of_kind(scorer.score_result(["The cat sat."], ["A cat sat."]), scorer, rescaled)
        embedders.add(id(scorer.embedder))
        answers.setdefault(rescaled, []).append(space.score_json(result))
        assert note == ""
    assert len(builds) == 1 and len(embedders) == 1
    # Each kind's numbers and hash are those of a scorer of that kind alone.
    for rescaled, outs in answers.items():
        alone = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=rescaled)
        expected = space.score_json(alone.score_result(["The cat sat."], ["A cat sat."]))
        assert outs[0] == outs[1] == expected
