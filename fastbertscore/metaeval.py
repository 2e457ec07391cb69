"""Correlation of BERTScore (every layer, one pass) with human ratings, beside sentence chrF and SentBLEU.

Statistics come from ``scipy.stats``: Pearson r, Spearman ρ and Kendall τ-b at segment level, Pearson r of
system means at system level, and a bootstrap 95% interval of τ that resamples segments.
"""

from __future__ import annotations

import csv
import logging
import math
from itertools import islice
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

logger = logging.getLogger(__name__)

POOLED = "pooled"


@dataclass
class Judgments:
    cands: list[str]
    refs: list[str]
    human: np.ndarray
    groups: list[str]  # e.g. "2022 cs-en"
    systems: list[str]
    segments: list[str]  # segment key inside a group, for the bootstrap


def read_judgments(path, *, cand="candidate", ref="reference", human="human", group=("year", "lp"),
                   system="system", segment="seg_id", limit: int | None = None) -> Judgments:
    """Read a CSV/TSV (by extension) of ratings. Group, system and segment columns are optional.

    Raises:
        ValueError: a required column is missing (the message lists the file's columns) or a human score is
            not a number (the message names the row).
    """
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t" if path.suffix.lower() in (".tsv", ".txt") else ",")
        columns = reader.fieldnames or []
        for name in (cand, ref, human):
            if name not in columns:
                raise ValueError(f"{path.name}: column {name!r} not found; the file has: {', '.join(columns)}")
        group = [g for g in group if g in columns]
        rows = list(islice(reader, limit))
    scores = []
    for i, row in enumerate(rows, start=2):
        try:
            value = float(row[human])
        except (TypeError, ValueError):
            raise ValueError(f"{path.name} line {i}: human score {row[human]!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"{path.name} line {i}: human score {row[human]!r} is not finite")
        scores.append(value)
    key = lambda row, names: " ".join(row[n] for n in names) if names else "all"  # noqa: E731
    return Judgments(
        [r[cand] for r in rows], [r[ref] for r in rows], np.array(scores), [key(r, group) for r in rows],
        [r.get(system, "") if system in columns else "" for r in rows],
        [r.get(segment, str(i)) if segment in columns else str(i) for i, r in enumerate(rows)],
    )


def bertscore_all_layers(scorer, data: Judgments, verbose: bool = True) -> np.ndarray:
    """``(L + 1, N, 3)`` P, R, F of every layer from one forward pass per batch (``scorer.all_layers``)."""
    if not scorer.all_layers:
        raise ValueError("the scorer must be built with all_layers=True")
    P, R, F = scorer.score(data.cands, data.refs, verbose=verbose)
    return np.stack([P.numpy(), R.numpy(), F.numpy()], axis=-1)


def surface_metrics(data: Judgments) -> dict[str, np.ndarray]:
    """Sentence chrF and SentBLEU (sacrebleu defaults, one reference) for every row."""
    import sacrebleu

    pairs = list(zip(data.cands, data.refs))
    return {
        "chrF": np.array([sacrebleu.sentence_chrf(c, [r]).score for c, r in tqdm(pairs, desc="chrF", leave=False)]),
        "SentBLEU": np.array([sacrebleu.sentence_bleu(c, [r]).score for c, r in tqdm(pairs, desc="SentBLEU", leave=False)]),
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
    result = Stats(len(rows), stats.pearsonr(x, y).statistic, stats.spearmanr(x, y).statistic, stats.kendalltau(x, y).statistic)
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


def meta_evaluate(scorer, data: Judgments, *, bootstrap: int = 1000, seed: int = 0, surface: bool = True,
                  verbose: bool = True) -> Report:
    """Correlations of P, R, F at every layer (and of chrF, SentBLEU) with the human scores."""
    scores = bertscore_all_layers(scorer, data, verbose=verbose)
    report = Report(scorer.model_type)
    named = {f"{kind} L{layer}": scores[layer, :, k] for layer in range(scores.shape[0]) for k, kind in enumerate("PRF")}
    if surface:
        named.update(surface_metrics(data))
    for name, values in tqdm(named.items(), desc="correlations", disable=not verbose):
        report.metrics[name] = correlate(values, data, bootstrap=bootstrap, seed=seed)
    return report


def table_rows(report: Report) -> list[dict]:
    """One row per (metric, group): everything the CSV holds."""
    rows = []
    for name, groups in report.metrics.items():
        for group, st in groups.items():
            rows.append({
                "metric": name, "group": group, "n": st.n, "pearson": st.pearson, "spearman": st.spearman,
                "kendall": st.kendall, "kendall_ci_low": st.kendall_ci[0], "kendall_ci_high": st.kendall_ci[1],
                "system_pearson": st.system_pearson, "note": st.note,
            })
    return rows


def write_csv(report: Report, path) -> None:
    rows = table_rows(report)
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def markdown(report: Report, kind: str = "F") -> str:
    """Segment-level Kendall τ per group: BERTScore ``kind`` at every layer, then chrF and SentBLEU."""
    names = [n for n in report.metrics if n.startswith(f"{kind} L")] + [n for n in ("chrF", "SentBLEU") if n in report.metrics]
    groups = list(next(iter(report.metrics.values())))
    best = report.best_layer(kind)
    fmt = lambda v: "–" if not math.isfinite(v) else f"{v:.3f}"  # noqa: E731
    lines = [
        "| metric | " + " | ".join(groups) + " | mean τ over groups |",
        "|---|" + "---:|" * (len(groups) + 1),
    ]
    for name in names:
        cells = []
        for g in groups:
            st = report.metrics[name][g]
            cell = fmt(st.kendall)
            if g == POOLED and math.isfinite(st.kendall_ci[0]):
                cell += f" [{st.kendall_ci[0]:.3f}, {st.kendall_ci[1]:.3f}]"
            cells.append(cell)
        taus = [report.metrics[name][g].kendall for g in groups if g != POOLED]
        mean = float(np.nanmean(taus)) if any(math.isfinite(t) for t in taus) else math.nan
        label = f"BERTScore {name}" + (" (best)" if name == f"{kind} L{best}" else "") if name.startswith(kind) else name
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {fmt(mean)} |")
    return "\n".join(lines) + "\n"


def plot(report: Report, path) -> None:
    """Mean segment-level τ over groups against layer, for P, R and F, with chrF and SentBLEU as lines."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for kind in "PRF":
        curve = report.layer_curve(kind)
        ax.plot(list(curve), list(curve.values()), marker="o", label=f"BERTScore {kind}")
    for name, style in (("chrF", "--"), ("SentBLEU", ":")):
        if name in report.metrics:
            taus = [s.kendall for g, s in report.metrics[name].items() if g != POOLED]
            ax.axhline(float(np.nanmean(taus)), color="gray", linestyle=style, label=name)
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("mean segment-level Kendall τ")
    ax.set_title(report.model)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
