"""What the Space's handlers take and give: the settings boxes every tab shares (:class:`Options`) and each tab's
outputs (a view: plain tables, texts and figures, and the unrounded numbers behind them)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from fastbertscore.models.defaults import DEFAULT_MODEL
from fastbertscore.result import ScoreResult
from fastbertscore.significance import Comparison
from fastbertscore.significance.resampling import Test
from fastbertscore.space.tables import Table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The Compare tab's tests, as its dropdown names them.
TESTS: dict[str, Test | None] = {
    "paired bootstrap": "bs",
    "approximate randomization": "ar",
    "none (intervals only)": None,
}
#: First-run examples: real-looking MT output against human references; the second has two references.
EXAMPLES = [
    [
        "The government announced on Tuesday new measures to support small businesses.",
        "On Tuesday the government unveiled new measures to help small businesses.",
    ],
    [
        "The meeting was postponed because of the storm.",
        "The meeting was put off because of the storm.\nBecause of the storm, the meeting has been delayed by a week.",
    ],
    [
        "Prices rose by three percent last year, the statistics office said.",
        "According to the statistics office, prices increased by 3% last year.",
    ],
]


@dataclass(frozen=True)
class Options:
    """The settings boxes every tab shares, in the order the page passes them."""

    model: str | None = DEFAULT_MODEL
    layer: str | int | None = ""  # empty: the model's tuned layer
    lang: str | None = "en"  # for rescaling
    idf: bool = False  # idf counted over the request's references
    do_rescale: bool = True  # also show rescaled scores
    dtype: str | None = "float32"


#: The shared boxes' names, in :class:`Options` order (the page builds its inputs from them).
OPTION_NAMES = tuple(f.name for f in fields(Options))


@dataclass(frozen=True)
class PairView:
    """The Pair tab's outputs."""

    scores: Table
    hashcode: str
    kind: str  # "raw" or "rescaled": the kind of the hash code and of the similarities
    counted: str
    note: str
    heatmap: Figure
    missing: list[tuple[str, str | float | None]]
    cut_at: int | None  # the reference is cut past this many tokens (greyed in the missed-words panel)
    matches: Table
    result: ScoreResult  # the numbers the table shows, unrounded


@dataclass(frozen=True)
class BatchView:
    """The Batch tab's outputs; ``download`` is the path of the result CSV (full texts)."""

    results: Table
    download: str
    summary: str
    histogram: Figure
    result: ScoreResult


@dataclass(frozen=True)
class CompareView:
    """The Compare tab's outputs."""

    table: Table
    summary: str
    chart: Figure
    comparison: Comparison
