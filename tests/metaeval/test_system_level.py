"""System-level agreement: pairwise accuracy and Kendall τ of system means, by hand and through the CLI."""

from __future__ import annotations

import numpy as np
import pytest
from paths import RATINGS
from scipy import stats
from tolerances import fp64

import fastbertscore as fb
from fastbertscore import metaeval
from fastbertscore.cli.main import main
from fastbertscore.metaeval.judgments import Judgments


def _judgments(human, groups, systems, segments) -> Judgments:
    n = len(human)
    return Judgments(["c"] * n, ["r"] * n, np.array(human, dtype=float), groups, systems, segments)


def test_pairwise_accuracy_counts_the_pairs_ordered_as_people_order_them():
    # Test set "a": systems x > y > z for people; the metric swaps y and z (1 of 3 pairs wrong).
    # Test set "b": u > v for people and for the metric. Row 6 (system z, segment 2) is missing: means use what exists.
    human = [3, 2, 1, 3, 2, 5, 1, 0]
    metric = np.array([0.9, 0.1, 0.5, 0.9, 0.1, 0.2, 0.8, 0.7])
    groups = ["a"] * 6 + ["b"] * 2
    systems = ["x", "y", "z", "x", "y", "x", "u", "v"]
    segments = ["1", "1", "1", "2", "2", "3", "1", "1"]
    data = _judgments(human, groups, systems, segments)
    sets = metaeval.test_sets(data)
    assert [ts.name for ts in sets] == ["a", "b"] and sets[0].present.sum() == 6
    result = metaeval.system_agreement(metric, data.human, sets, bootstrap=0)
    assert result.pairs == 4 and result.accuracy == pytest.approx(3 / 4, abs=0)
    means_a = [np.mean(metric[[0, 3, 5]]), np.mean(metric[[1, 4]]), metric[2]]
    human_a = [np.mean([3, 3, 5]), 2, 1]
    assert result.kendall["a"] == pytest.approx(stats.kendalltau(means_a, human_a).statistic, abs=fp64(3))
    assert np.isnan(result.kendall["b"])  # two systems: τ says nothing a pair does not


def test_a_metric_equal_to_the_ratings_agrees_everywhere_and_a_reversed_one_nowhere():
    data = metaeval.read_judgments(RATINGS)
    sets = metaeval.test_sets(data)
    same = metaeval.system_agreement(data.human, data.human, sets, bootstrap=100, seed=1)
    assert same.accuracy == 1.0 and same.accuracy_ci == (1.0, 1.0) and same.pairs == 36  # 9 systems
    reversed_ = metaeval.system_agreement(-data.human, data.human, sets, bootstrap=0)
    assert reversed_.accuracy == 0.0 and reversed_.kendall["2021 is-en"] == pytest.approx(-1.0, abs=fp64(9))


def test_correlate_system_level_command(tmp_path, capsys):
    out = tmp_path / "system.md"
    code = main(
        ["correlate", "--system-level", "--data", str(RATINGS), "--bootstrap", "50", "--no-surface", "--out", str(out)]
    )
    assert code == 0
    table = out.read_text()
    assert "pairwise accuracy (36 pairs, 95% CI)" in table and "**BERTScore F L3 (default)**" in table
    data = metaeval.read_judgments(RATINGS)
    every = metaeval.bertscore_all_layers(
        fb.BERTScorer(model_type=fb.DEFAULT_MODEL, all_layers=True), data, verbose=False
    )
    direct = metaeval.system_agreement(every[3, :, 2], data.human, metaeval.test_sets(data), bootstrap=50, seed=0)
    row = next(line for line in table.splitlines() if "F L3" in line)
    assert f"| {direct.accuracy:.3f} ({direct.accuracy_ci[0]:.3f}–{direct.accuracy_ci[1]:.3f}) |" in row
    assert table in capsys.readouterr().out
