"""The scorer behind every Space request: one loaded model for raw and rescaled requests, and what a language
without a baseline tells a browser user."""

from __future__ import annotations

import fastbertscore as fb
from fastbertscore import assembly, space


def test_a_language_without_a_baseline_says_what_to_do_in_the_browser():
    # The note showed server paths and CLI advice ("--baseline-path", "bertscore-baseline build").
    settings = fb.Settings(model_type=fb.DEFAULT_MODEL, lang="xx")
    scorer, note = space.space_scorer(settings)
    assert not scorer.rescale_with_baseline
    assert "'xx'" in note and "choose another language" in note and "untick 'Also show rescaled scores'" in note
    assert "/" not in note.replace(fb.DEFAULT_MODEL, "") and "--" not in note and "bertscore-" not in note
    assert note.count(". ") <= 1  # the reason, then what to do


def test_one_loaded_model_serves_raw_and_rescaled_requests(monkeypatch):
    # Alternating the raw /score endpoint with the rescaled Pair tab built a new scorer, and so a new
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


def test_a_filesystem_error_in_the_baseline_lookup_is_a_note_and_raw_scores(monkeypatch, caplog, model_builds):
    # "[Errno 36] File name too long" (a 300-character language) reached the page as a failed model load.
    from fastbertscore.baselines import lookup

    monkeypatch.setattr(lookup, "SHIPPED_DIRS", (lookup.SHIPPED_DIRS[1] / ("x" * 300),))  # stat: ENAMETOOLONG
    monkeypatch.setattr(space.models, "NOTES", space.bounded.BoundedCache(space.MAX_NOTES))
    view = space.score_pair("A cat sat.", "A cat was sitting.")
    assert view.result.rescaled is None and view.kind == "raw"
    assert view.note.startswith("Only raw scores: the rescaling baseline for language 'en' with ")
    assert "could not be read on the server just now" in view.note and "xxx" not in view.note
    assert "File name too long" in caplog.text and len(space.models.NOTES) == 0  # asked again next time


def test_the_raw_twin_finds_the_rescaling_scorers_embeddings(model_builds):
    # Each scorer owned its embedding cache: Compare's raw twin embedded every text the Pair tab had embedded.
    settings = fb.Settings(model_type=fb.DEFAULT_MODEL, lang="en", cache_mb=16)
    scorer, _ = space.space_scorer(settings)
    scorer.score_result(["The cat sat."], ["A cat sat."])
    twin = space.scorer_of_kind(scorer, rescaled=False)
    assert twin is not scorer and not twin.rescale_with_baseline
    assert twin.embedder.cache is scorer.embedder.cache
    misses = scorer.embedder.cache.misses
    twin.score_result(["The cat sat."], ["A cat sat."])
    assert twin.embedder.cache.misses == misses
