"""System-level agreement with people: does a metric order systems as the human ratings do?

A system's metric score is its mean over the rows judged for it in a test set, its human score the mean rating
of the same rows. Pairwise accuracy (Kocmi et al., 2021, "To Ship or Not to Ship") is the share of system pairs,
over every test set, that the metric orders as people do; its 95% interval comes from resampling segments within
each test set. Kendall τ-b between the two orders is given per test set.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from fastbertscore.metaeval.judgments import Judgments


@dataclass(frozen=True)
class TestSet:
    """One group's rows as a (segments × systems) table: ``present`` marks the rows that exist."""

    name: str
    systems: list[str]
    rows: np.ndarray  # (segments, systems) row index into the judgments, -1 where absent

    @property
    def present(self) -> np.ndarray:
        return self.rows >= 0

    def means(self, values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """System means of ``values`` (one per row), each segment counted ``weights`` times (default once):
        ``(systems,)``, or ``(resamples, systems)`` for ``(resamples, segments)`` weights."""
        table = np.where(self.present, values[np.maximum(self.rows, 0)], 0.0)
        w = np.ones(len(table)) if weights is None else weights
        return (w @ table) / (w @ self.present)


@dataclass(frozen=True)
class SystemAgreement:
    """One metric's system-level agreement: pairwise accuracy over all test sets, and τ per test set."""

    accuracy: float
    accuracy_ci: tuple[float, float]
    pairs: int
    kendall: dict[str, float]


def test_sets(data: Judgments) -> list[TestSet]:
    """The groups of ``data`` as system × segment tables (systems with at least one judged row)."""
    by_group: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for i, (g, s, seg) in enumerate(zip(data.groups, data.systems, data.segments, strict=True)):
        by_group[g][(s, seg)] = i
    out = []
    for name in sorted(by_group):
        cells = by_group[name]
        systems = sorted({s for s, _ in cells})
        segments = sorted({seg for _, seg in cells}, key=lambda x: (len(x), x))
        segment_at, system_at = {x: k for k, x in enumerate(segments)}, {x: k for k, x in enumerate(systems)}
        rows = np.full((len(segments), len(systems)), -1)
        for (s, seg), i in cells.items():
            rows[segment_at[seg], system_at[s]] = i
        out.append(TestSet(name, systems, rows))
    return out


def _agreements(metric: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, int]:
    """Per resample (rows), how many system pairs the metric orders as people do, and the number of pairs."""
    a, b = np.triu_indices(metric.shape[-1], k=1)
    agree = np.sign(metric[..., a] - metric[..., b]) == np.sign(human[..., a] - human[..., b])
    return agree.sum(axis=-1), len(a)


def system_agreement(
    values: np.ndarray, human: np.ndarray, sets: list[TestSet], *, bootstrap: int = 1000, seed: int = 0
) -> SystemAgreement:
    """Pairwise accuracy of ``values`` against ``human`` (one score per row each) over all ``sets``, with a 95%
    interval from ``bootstrap`` resamples of segments within each test set, and Kendall τ-b per test set."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    agreed, total, resampled = 0, 0, np.zeros(max(bootstrap, 0))
    kendall = {}
    for ts in sets:
        metric, people = ts.means(values), ts.means(human)
        hits, pairs = _agreements(metric, people)
        agreed, total = agreed + int(hits), total + pairs
        kendall[ts.name] = float(stats.kendalltau(metric, people).statistic) if len(ts.systems) > 2 else math.nan
        if bootstrap > 0:
            picks = rng.integers(0, len(ts.present), size=(bootstrap, len(ts.present)))
            weights = np.stack([np.bincount(p, minlength=len(ts.present)) for p in picks]).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                hits, _ = _agreements(ts.means(values, weights), ts.means(human, weights))
            resampled += hits
    ci = (
        (float(np.percentile(resampled / total, 2.5)), float(np.percentile(resampled / total, 97.5)))
        if bootstrap > 0
        else (math.nan, math.nan)
    )
    return SystemAgreement(agreed / total if total else math.nan, ci, total, kendall)


def system_level(
    scores: dict[str, np.ndarray], data: Judgments, *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, SystemAgreement]:
    """:func:`system_agreement` of every metric in ``scores`` (name → one score per row), on the same resamples."""
    sets = test_sets(data)
    return {
        name: system_agreement(values, data.human, sets, bootstrap=bootstrap, seed=seed)
        for name, values in scores.items()
    }


def system_markdown(results: dict[str, SystemAgreement], highlight: str | None = None) -> str:
    """Pairwise accuracy with its interval, then Kendall τ per test set, one metric a row (``highlight`` in bold)."""
    sets = list(next(iter(results.values())).kendall)
    pairs = next(iter(results.values())).pairs
    fmt = lambda v: "–" if not math.isfinite(v) else f"{v:.3f}"
    lines = [
        f"| metric | pairwise accuracy ({pairs} pairs, 95% CI) | " + " | ".join(f"τ {s}" for s in sets) + " |",
        "|---|---:|" + "---:|" * len(sets),
    ]
    for name, r in results.items():
        label = f"**{name}**" if name == highlight else name
        lines.append(
            f"| {label} | {r.accuracy:.3f} ({r.accuracy_ci[0]:.3f}–{r.accuracy_ci[1]:.3f}) | "
            + " | ".join(fmt(r.kendall[s]) for s in sets)
            + " |"
        )
    return "\n".join(lines) + "\n"
