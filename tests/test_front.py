"""The front door (fastbertscore.front): options or a scorer, not both, refused in one place for every entry point;
the texts idf is counted over passed beside the settings, never held by them."""

from __future__ import annotations

import re
import shutil

import pytest
import torch
from paths import MINILM, REPO
from route import (
    MAX_ABOVE_STEPS,
    MAX_FRONT,
    MAX_FRONT_MODULES,
    MAX_FUNCTIONS,
    MAX_HOPS,
    MAX_MODULES,
    MAX_MODULES_ABOVE_STEPS,
    score_route,
)
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.front import run
from fastbertscore.validate import check_pairs


def test_options_beside_a_scorer_are_refused_with_one_message_by_every_entry_point():
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=2)
    calls = {
        "explain()": lambda: fb.explain("a cat", "a dog", scorer=scorer, num_layers=3),
        "compare()": lambda: fb.compare({"A": ["a cat"]}, ["a dog"], test=None, scorer=scorer, num_layers=3),
        "score()": lambda: run(check_pairs(["a cat"], ["a dog"]), {"num_layers": 3}, scorer=scorer),
    }
    for caller, call in calls.items():
        with pytest.raises(
            TypeError,
            match=rf"{re.escape(caller)} takes either scorer= or settings options, not both \(got num_layers\)",
        ):
            call()


def test_idf_sents_beside_the_settings_weighs_as_the_scorer_built_with_them(mt_pairs):
    cands, refs = mt_pairs[0][::12], mt_pairs[1][::12]
    counted_over = mt_pairs[0][30:40]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=True, idf_sents=counted_over)
    out = fb.compute(cands, refs, model_type=MINILM, num_layers=2, idf=True, idf_sents=counted_over)
    assert_scores_close([torch.tensor(out[k]) for k in ("precision", "recall", "f1")], scorer.score(cands, refs))
    own = fb.compute(cands, refs, model_type=MINILM, num_layers=2, idf=True)  # counted over the references
    assert out["f1"] != own["f1"]
    with pytest.raises(ValueError, match="idf_sents is empty"):
        fb.score(cands, refs, model_type=MINILM, idf=True, idf_sents=[])


def test_scorers_of_one_model_are_kept_beside_each_other_and_another_model_lets_them_go(tiny_model):
    plain = fb.Settings(model_type=MINILM, num_layers=2)
    kept = fb.cached_scorer(plain)
    cached = fb.cached_scorer(fb.Settings(model_type=MINILM, num_layers=2, cache_mb=8))  # compute()'s beside score()'s
    assert fb.cached_scorer(plain) is kept and cached is not kept
    fb.cached_scorer(fb.Settings(model_type=tiny_model("bert"), num_layers=2))
    assert fb.cached_scorer(plain) is not kept  # none holds a model models.shared let go


def test_the_kept_scorer_refuses_compute_idf_which_would_change_the_numbers_of_later_calls():
    cands, refs = ["the cat sat on the mat", "a dog ran"], ["a cat sat there", "the dog ran off"]
    before = fb.score(cands, refs, model_type=MINILM, num_layers=2, return_hash=True)
    kept = fb.cached_scorer(fb.Settings(model_type=MINILM, num_layers=2))
    with pytest.raises(
        ValueError, match=r"this scorer is shared between calls \(cached_scorer, score, compute\): use with_idf\(\)"
    ):
        kept.compute_idf(["the cat", "the dog"])
    after = fb.score(cands, refs, model_type=MINILM, num_layers=2, return_hash=True)
    assert after[1] == before[1] and all(torch.equal(a, b) for a, b in zip(after[0], before[0], strict=True))
    own = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=True)
    own.compute_idf(["the cat", "the dog"])  # a scorer of one's own: bert-score's method, as before
    assert own.hash != before[1]


def test_score_reuses_its_kept_scorer_and_counts_idf_over_each_calls_own_references(mt_pairs):
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    other = mt_pairs[1][20:26]
    for over in (refs, other, refs):
        scores, code = fb.score(cands, over, model_type=MINILM, num_layers=2, idf=True, return_hash=True)
        fresh = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=True, idf_sents=over)
        assert_scores_close(scores, fresh.score(cands, over))
        assert code == fresh.hash


def test_the_route_of_one_score_call_stays_as_counted():
    """The second of two identical ``score`` calls enters no more functions, modules and hops of the package than
    ARCHITECTURE.md counts (``tests/route.py``), so a needless hop cannot come back unseen."""
    route = score_route(MINILM)
    above, front = route.above_steps, route.front
    counted = (
        *(len(route.functions), len(route.modules), len(route.hops), len(above), len({m for m, _ in above})),
        *(len(front), len({m for m, _ in front})),
    )
    limits = (MAX_FUNCTIONS, MAX_MODULES, MAX_HOPS, MAX_ABOVE_STEPS, MAX_MODULES_ABOVE_STEPS)
    limits += (MAX_FRONT, MAX_FRONT_MODULES)
    listing = "\n".join(f"{m}.{f}" for m, f in route.functions)
    assert all(n <= most for n, most in zip(counted, limits, strict=True)), f"{counted} > {limits}:\n{listing}"
    text = " ".join((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8").split())
    assert f"{MAX_FUNCTIONS} named functions of the package" in text
    assert f"in {MAX_MODULES} modules. {MAX_HOPS} of those functions are hops" in text
    assert f"the front's route is {MAX_FRONT} functions in {MAX_FRONT_MODULES} modules" in text


def test_options_given_again_find_their_settings_checked_once_and_a_value_of_another_type_is_checked_anew():
    from fastbertscore.front import checked

    options = {"model_type": MINILM, "num_layers": 2, "idf": True}
    first = checked("score()", options)
    assert checked("score()", dict(options)) is first  # equal options, equal types: the settings made before
    with pytest.raises(TypeError, match="idf must be True, False or a"):
        checked("score()", {**options, "idf": 1})  # 1 == True, but not a flag: refused, as the first time
    for layer, equal in ((True, 1), (2.0, 2)):  # refused by the scorer's load, after a call that kept a scorer
        fb.score(["a cat"], ["a dog"], model_type=MINILM, num_layers=equal)
        with pytest.raises(TypeError, match="num_layers must be a whole number"):
            fb.score(["a cat"], ["a dog"], model_type=MINILM, num_layers=layer)
    weights = {"model_type": MINILM, "idf": {5: 1.0}}
    assert checked("score()", weights) is not checked("score()", weights)  # a mapping the caller may change


def test_a_cache_dir_that_became_a_file_is_refused_on_the_next_call_with_the_same_options(tmp_path):
    folder = tmp_path / "cache"
    options = {"model_type": MINILM, "num_layers": 2, "cache_dir": str(folder)}
    fb.score(["a cat"], ["the cat"], **options)
    assert folder.is_dir()
    shutil.rmtree(folder)
    folder.write_text("not a folder")
    with pytest.raises(ValueError, match="exists and is not a folder"):
        fb.score(["a cat"], ["the cat"], **options)


def test_a_model_or_baseline_saved_again_into_its_place_is_read_again_by_the_next_call(tmp_path):
    """The kept scorer is found by its settings and by what its files are now: a fine-tuning loop that saves into
    one folder, or a baseline file written again, gets the new numbers without clear_model_cache()."""
    import transformers as T
    from tiny_models import save_tiny

    folder = save_tiny("bert", tmp_path / "model")
    cands, refs = ["the cat sat on the mat", "a dog ran"], ["a cat sat there", "the dog ran off"]
    before = fb.score(cands, refs, model_type=str(folder), num_layers=2)[2]
    model = T.AutoModel.from_pretrained(folder)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight.mul_(-1.5).add_(0.3)
    model.save_pretrained(folder)
    after = fb.score(cands, refs, model_type=str(folder), num_layers=2)[2]
    fb.clear_model_cache()
    assert torch.equal(after, fb.score(cands, refs, model_type=str(folder), num_layers=2)[2])
    assert not torch.equal(before, after)

    baseline = tmp_path / "baseline.tsv"
    baseline.write_text("LAYER,P,R,F\n0,0.1,0.1,0.1\n1,0.1,0.1,0.1\n2,0.1,0.1,0.1\n")
    rescaling = {
        "model_type": str(folder),
        "num_layers": 2,
        "rescale_with_baseline": True,
        "baseline_path": str(baseline),
    }
    rescaled = fb.score(cands, refs, **rescaling)[2]
    baseline.write_text("LAYER,P,R,F\n0,0.1,0.1,0.1\n1,0.1,0.1,0.1\n2,0.2,0.2,0.2\n")
    again = fb.score(cands, refs, **rescaling)[2]
    assert not torch.equal(rescaled, again)
