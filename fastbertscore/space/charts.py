"""The Space's charts (matplotlib is imported on first use, and only its bare ``Figure``: pyplot would keep every
request's figure alive)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastbertscore.significance import Comparison
from fastbertscore.space.tables import kind

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_BLUE = "#3b6ea8"


def _figure(size: tuple[float, float]) -> tuple[Figure, Axes]:
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("the charts need matplotlib: pip install 'fastbertscore[plot]'") from None
    fig = Figure(figsize=size)
    return fig, fig.subplots()


def histogram(values: list[float], rescaled: bool) -> Figure:
    """A histogram of per-pair F1 values of the given kind."""
    fig, ax = _figure((5, 3))
    ax.hist(values, bins=min(30, max(5, len(values) // 5)), color=_BLUE)
    ax.set_xlabel(f"F1 ({kind(rescaled)})")
    ax.set_ylabel("pairs")
    fig.tight_layout()
    return fig


def f1_chart(comparison: Comparison, rescaled: bool) -> Figure:
    """Each system's corpus F1 with its 95% confidence interval as whiskers."""
    fig, ax = _figure((6, 3))
    names = [s.name for s in comparison.systems]
    ax.errorbar(
        range(len(names)),
        [s.scores[2] for s in comparison.systems],
        yerr=[s.intervals[2].half_width for s in comparison.systems],
        fmt="o",
        capsize=6,
        color=_BLUE,
    )
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylabel(f"F1 ({kind(rescaled)}), 95% CI")
    fig.tight_layout()
    return fig
