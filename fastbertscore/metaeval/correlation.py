"""Correlation of BERTScore (every layer, one pass) with human ratings, beside sentence chrF and SentBLEU.

Statistics come from ``scipy.stats``: Pearson r, Spearman ρ and Kendall τ-b at segment level, Pearson r of
system means at system level, and a bootstrap 95% interval of τ that resamples segments.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from fastbertscore.metaeval.judgments import POOLED, Judgments
from fastbertscore.scorer import BERTScorer

logger = logging.getLogger(__name__)


def bertscore_all_layers(scorer: BERTScorer, data: Judgments, verbose: bool = True) -> np.ndarray:
    """``(L + 1, N, 3)`` P, R, F of every layer from one forward pass per batch (``scorer.all_layers``)."""
    if not scorer.all_layers:
        raise ValueError("the scorer must be built with all_layers=True")
    P, R, F = scorer.score(data.cands, data.refs, verbose=verbose)
    return np.stack([P.numpy(), R.numpy(), F.numpy()], axis=-1)


def surface_metrics(data: Judgments) -> dict[str, np.ndarray]:
    """Sentence chrF and SentBLEU (sacrebleu defaults, one reference) for every row."""
    import sacrebleu

    pairs = list(zip(data.cands, data.refs, strict=True))
    return {
        "chrF": np.array([sacrebleu.sentence_chrf(c, [r]).score for c, r in tqdm(pairs, desc="chrF", leave=False)]),
        "SentBLEU": np.array(
            [sacrebleu.sentence_bleu(c, [r]).score for c, r in tqdm(pairs, desc="SentBLEU", leave=False)]
        ),
    }


@dataclass
class Stats:
    n: int
    pearson: float = math.nan
    spearman: float = math.nan
    kendall: float = math.nan
    kendall_ci: tuple[float, float] = (math.nan, math.nan)
    system_pearson: float = math.nan
    note: str = ""


def correlate(values: np.ndarray, data: Judgments, *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Stats]:
    """Statistics of one metric per group and pooled. Groups of fewer than 3 rows get a note, not numbers."""
    index: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(data.groups):
        index[g].append(i)
    out = {g: _stats(np.array(rows), values, data, bootstrap, seed) for g, rows in sorted(index.items())}
    if len(index) > 1:
        out[POOLED] = _stats(np.arange(len(values)), values, data, bootstrap, seed)
    return out


def _stats(rows: np.ndarray, values: np.ndarray, data: Judgments, bootstrap: int, seed: int) -> Stats:
    from scipy import stats

    x, y = values[rows], data.human[rows]
    if len(rows) < 3:
        return Stats(len(rows), note=f"fewer than 3 rows ({len(rows)})")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return Stats(len(rows), note="constant scores")
    result = Stats(
        len(rows), stats.pearsonr(x, y).statistic, stats.spearmanr(x, y).statistic, stats.kendalltau(x, y).statistic
    )
    result.kendall_ci = _bootstrap_tau(rows, values, data, bootstrap, seed)
    systems = defaultdict(list)
    for i in rows:
        systems[data.systems[i]].append(i)
    if len(systems) >= 3:
        mx = [values[idx].mean() for idx in systems.values()]
        my = [data.human[idx].mean() for idx in systems.values()]
        result.system_pearson = stats.pearsonr(mx, my).statistic
    return result


def _bootstrap_tau(rows: np.ndarray, values: np.ndarray, data: Judgments, n: int, seed: int) -> tuple[float, float]:
    """Percentile interval of τ over ``n`` resamples of whole segments (all systems' rows of a segment)."""
    from scipy import stats

    if n <= 0:
        return (math.nan, math.nan)
    by_segment: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i in rows:
        by_segment[(data.groups[i], data.segments[i])].append(int(i))
    segments = list(by_segment.values())
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(n):
        pick = np.concatenate([segments[k] for k in rng.integers(0, len(segments), len(segments))])
        tau = stats.kendalltau(values[pick], data.human[pick]).statistic
        if math.isfinite(tau):
            taus.append(tau)
    return (float(np.percentile(taus, 2.5)), float(np.percentile(taus, 97.5))) if taus else (math.nan, math.nan)


@dataclass
class Report:
    model: str
    metrics: dict[str, dict[str, Stats]] = field(default_factory=dict)  # "F L5" → group → stats

    def layer_curve(self, kind: str = "F") -> dict[int, float]:
        """Mean segment-level τ over groups (pooled excluded) per layer."""
        curve = {}
        for name, groups in self.metrics.items():
            if name.startswith(f"{kind} L"):
                taus = [s.kendall for g, s in groups.items() if g != POOLED and math.isfinite(s.kendall)]
                curve[int(name.split("L")[1])] = float(np.mean(taus)) if taus else math.nan
        return curve

    def best_layer(self, kind: str = "F") -> int:
        """The layer with the best mean τ; ties go to the shallower (cheaper) layer."""
        curve = {k: v for k, v in self.layer_curve(kind).items() if math.isfinite(v)}
        if not curve:
            raise ValueError("no layer has a defined correlation (too few rows per group?)")
        top = max(curve.values())
        return min(layer for layer, tau in curve.items() if tau == top)


def meta_evaluate(
    scorer: BERTScorer,
    data: Judgments,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    surface: bool = True,
    verbose: bool = True,
) -> Report:
    """Correlations of P, R, F at every layer (and of chrF, SentBLEU) with the human scores."""
    scores = bertscore_all_layers(scorer, data, verbose=verbose)
    report = Report(scorer.model_type)
    named = {
        f"{kind} L{layer}": scores[layer, :, k] for layer in range(scores.shape[0]) for k, kind in enumerate("PRF")
    }
    if surface:
        named.update(surface_metrics(data))
    for name, values in tqdm(named.items(), desc="correlations", disable=not verbose):
        report.metrics[name] = correlate(values, data, bootstrap=bootstrap, seed=seed)
    return report
