"""The front door (fastbertscore.front): options or a scorer, not both, refused in one place for every entry point;
the texts idf is counted over passed beside the settings, never held by them."""

from __future__ import annotations

import re

import pytest
import torch
from paths import MINILM
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
