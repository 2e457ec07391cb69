"""A meta-evaluation report as a Markdown table, a CSV and a plot of τ against layer."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from fastbertscore.files import write_atomic, write_figure
from fastbertscore.metaeval.correlation import Report
from fastbertscore.metaeval.judgments import POOLED


def table_rows(report: Report) -> list[dict]:
    """One row per (metric, group): everything the CSV holds."""
    rows = []
    for name, groups in report.metrics.items():
        for group, st in groups.items():
            rows.append(
                {
                    "metric": name,
                    "group": group,
                    "n": st.n,
                    "pearson": st.pearson,
                    "spearman": st.spearman,
                    "kendall": st.kendall,
                    "kendall_ci_low": st.kendall_ci[0],
                    "kendall_ci_high": st.kendall_ci[1],
                    "system_pearson": st.system_pearson,
                    "note": st.note,
                }
            )
    return rows


def write_csv(report: Report, path: str | Path) -> None:
    """Every row of :func:`table_rows`, written atomically."""
    rows = table_rows(report)
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())


def markdown(report: Report, kind: str = "F") -> str:
    """Segment-level Kendall τ per group: BERTScore ``kind`` at every layer, then chrF and SentBLEU."""
    names = [n for n in report.metrics if n.startswith(f"{kind} L")] + [
        n for n in ("chrF", "SentBLEU") if n in report.metrics
    ]
    groups = list(next(iter(report.metrics.values())))
    best = report.best_layer(kind)
    fmt = lambda v: "–" if not math.isfinite(v) else f"{v:.3f}"
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
        label = (
            f"BERTScore {name}" + (" (best)" if name == f"{kind} L{best}" else "") if name.startswith(kind) else name
        )
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {fmt(mean)} |")
    return "\n".join(lines) + "\n"


def plot(report: Report, path: str | Path) -> None:
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
    write_figure(path, fig)
    plt.close(fig)
