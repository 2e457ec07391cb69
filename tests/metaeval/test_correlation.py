"""Meta-evaluation on real human ratings: 120 rows of the WMT21 is-en judgments kept in tests/data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sacrebleu
from paths import (
    MINILM,
    RATINGS,
)
from scipy import stats
from tolerances import assert_scores_close, fp64

import fastbertscore as fb
from fastbertscore import metaeval
from fastbertscore.cli.main import main
from fastbertscore.models import layer_registry as registry
from fastbertscore.models.defaults import fallback_layer


@pytest.fixture(scope="module")
def data():
    return metaeval.read_judgments(RATINGS, limit=80)


@pytest.fixture(scope="module")
def report(data):
    scorer = fb.BERTScorer(model_type=MINILM, all_layers=True)
    return metaeval.meta_evaluate(scorer, data, bootstrap=50, seed=0, verbose=False)


def test_all_layers_pass_equals_per_layer_calls():
    # Two dozen real pairs: a layer's numbers from the one pass against their own call (the correlations below
    # need all 80 rows; this comparison needs no more than the parity tests' pairs).
    few = metaeval.read_judgments(RATINGS, limit=24)
    scorer = fb.BERTScorer(model_type=MINILM, all_layers=True)
    every = metaeval.bertscore_all_layers(scorer, few, verbose=False)
    assert every.shape == (7, 24, 3)
    for layer in (0, 3, 6):
        P, R, F = fb.score(few.cands, few.refs, model_type=MINILM, num_layers=layer)
        assert_scores_close([every[layer, :, k] for k in range(3)], (P, R, F))


def test_correlations_equal_scipy(report, data):
    # The very scores the report used (an all-layers pass): scores from another pass could differ in the last
    # bits and swap a near-tie, which moves Kendall's tau by a whole pair.
    F = metaeval.bertscore_all_layers(fb.BERTScorer(model_type=MINILM, all_layers=True), data, verbose=False)[4, :, 2]
    st = report.metrics["F L4"][data.groups[0]]
    assert st.n == 80
    assert st.kendall == pytest.approx(stats.kendalltau(F, data.human).statistic, abs=fp64(st.n))
    assert st.pearson == pytest.approx(stats.pearsonr(F, data.human).statistic, abs=fp64(st.n))
    assert st.spearman == pytest.approx(stats.spearmanr(F, data.human).statistic, abs=fp64(st.n))
    assert st.kendall_ci[0] <= st.kendall <= st.kendall_ci[1]


def test_chrf_and_sentbleu_match_sacrebleu(report, data):
    chrf = [sacrebleu.sentence_chrf(c, [r]).score for c, r in zip(data.cands, data.refs, strict=True)]
    bleu = [sacrebleu.sentence_bleu(c, [r]).score for c, r in zip(data.cands, data.refs, strict=True)]
    group = data.groups[0]
    assert report.metrics["chrF"][group].kendall == pytest.approx(
        stats.kendalltau(chrf, data.human).statistic, abs=fp64(len(chrf))
    )
    assert report.metrics["SentBLEU"][group].kendall == pytest.approx(
        stats.kendalltau(bleu, data.human).statistic, abs=fp64(len(bleu))
    )


def test_bootstrap_is_deterministic(data):
    values = np.sin(np.arange(80.0))
    a = metaeval.correlate(values, data, bootstrap=30, seed=7)[data.groups[0]].kendall_ci
    b = metaeval.correlate(values, data, bootstrap=30, seed=7)[data.groups[0]].kendall_ci
    c = metaeval.correlate(values, data, bootstrap=30, seed=8)[data.groups[0]].kendall_ci
    assert a == b != c and a[0] < a[1]


def test_best_layer_is_the_argmax_and_ties_go_shallower():
    def stats_for(tau):
        return {"g1": metaeval.Stats(10, kendall=tau), "g2": metaeval.Stats(10, kendall=tau)}

    report = metaeval.Report("m", {f"F L{i}": stats_for(t) for i, t in enumerate([0.1, 0.3, 0.2, 0.3])})
    assert report.best_layer() == 1
    report.metrics["F L2"] = stats_for(0.5)
    assert report.best_layer() == 2


def test_small_groups_are_reported_not_crashed(data):
    tiny = metaeval.Judgments(
        data.cands[:5], data.refs[:5], data.human[:5], ["a", "a", "b", "b", "b"], ["s"] * 5, list("12345")
    )
    out = metaeval.correlate(np.arange(5.0), tiny, bootstrap=10)
    assert out["a"].note == "fewer than 3 rows (2)" and math.isnan(out["a"].kendall)
    assert math.isfinite(out["b"].kendall) and "pooled" in out


def test_bad_files(tmp_path):
    missing = tmp_path / "m.tsv"
    missing.write_text("candidate\treference\nx\ty\n")
    with pytest.raises(ValueError, match="column 'human' not found; the file has: candidate, reference"):
        metaeval.read_judgments(missing)
    bad = tmp_path / "b.tsv"
    bad.write_text("candidate\treference\thuman\nx\ty\t0.5\nx\ty\thigh\n")
    with pytest.raises(ValueError, match="line 3: human score 'high' is not a number"):
        metaeval.read_judgments(bad)
    rated = tmp_path / "r.tsv"
    rated.write_text("candidate\treference\thuman\tlp\nx\ty\t0.5\tde-en\n")
    assert metaeval.read_judgments(rated).groups == ["de-en"]  # by default year and lp, where the file has them
    with pytest.raises(ValueError, match="group column 'lang' not found; the file has: candidate, reference, human"):
        metaeval.read_judgments(rated, group=("lp", "lang"))  # a column asked for by name is never dropped in silence


def test_json_lines_numbers_are_labels_and_texts_must_be_text(tmp_path):
    # JSON Lines writes a year or a segment id as a number: a label, as the same column of a CSV is.
    rows = [
        {"candidate": "a b", "reference": "a c", "human": 0.5, "year": 2022, "lp": "cs-en", "system": 1, "seg_id": 7},
        {"candidate": "a", "reference": "b", "human": -1, "year": 2022, "lp": "cs-en", "system": 2, "seg_id": 7},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data = metaeval.read_judgments(path)
    assert (data.groups, data.systems, data.segments) == (["2022 cs-en"] * 2, ["1", "2"], ["7", "7"])
    assert data.cands == ["a b", "a"] and data.human.tolist() == [0.5, -1.0]
    rows[1]["reference"] = 3
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(ValueError, match="r.jsonl line 3: 'reference' is 3, not text"):
        metaeval.read_judgments(path)
    rows[1]["reference"], rows[1]["lp"] = "b", ["cs", "en"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(ValueError, match=r"r.jsonl line 3: 'lp' is \['cs', 'en'\], not a label"):
        metaeval.read_judgments(path)


def test_tune_layer_records_a_layer_that_score_then_uses(tiny_model, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FASTBERTSCORE_LAYER_REGISTRY", str(tmp_path / "layers.json"))
    path = tiny_model("bert")
    code = main(
        [
            "tune-layer",
            "--data",
            str(RATINGS),
            "--limit",
            "60",
            "--model",
            path,
            "--bootstrap",
            "0",
            "--no-surface",
            "--record",
            "--out",
            str(tmp_path / "t.md"),
            "--plot",
            str(tmp_path / "t.png"),
        ]
    )
    assert code == 0
    best = registry.tuned_layer(path)
    assert best is not None and f"recorded layer {best}" in capsys.readouterr().out
    assert (tmp_path / "t.csv").exists() and (tmp_path / "t.png").stat().st_size > 1000
    # Opt-in: a file in the user's home never changes numbers silently, and when used the signature says so.
    scorer = fb.BERTScorer(model_type=path, layer_registry=True)
    assert scorer.num_layers == best and f"layer:{best} (registry)" in str(scorer.signature)
    assert f"_L{best}_" in scorer.hash
    assert fb.BERTScorer(model_type=path).num_layers == fallback_layer(4)
