"""Heatmap of candidate × reference similarities (matplotlib is imported only here).

Short texts show one cell per token. Past :data:`TOKEN_AXES` tokens on either side the axes show words (a
cell is the highest token similarity of the two words), and past :data:`MAX_CELLS` cells, or :data:`MAX_SIDE`
on one side, runs of consecutive words (again the highest similarity of the run), so the figure stays readable
and small enough to draw quickly and to encode as an image at any length (WebP stops at 16,383 pixels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fastbertscore.explanations.explanation import Explanation

TOKEN_AXES = 60  # tokens on a side before the axes switch to words
MAX_SIDE = 300  # cells on one side at most
MAX_CELLS = 5_000  # cells in all at most (drawing and encoding time grows with them)
GROUP_LABEL = 24  # characters of a run of words shown as its label


@dataclass(frozen=True)
class _Axis:
    labels: list[str]
    starts: list[int]  # index of the first token of each cell
    unit: str  # what a cell is: "tokens", "words" or "runs of K words"


def _token_axis(units, word_ids: list[int]) -> _Axis:
    """Token texts; a piece that continues the previous token's word is marked "##"."""
    labels = [("##" if k > 0 and word_ids[k] == word_ids[k - 1] else "") + (u.text or "∅") for k, u in enumerate(units)]
    return _Axis(labels, list(range(len(units))), "tokens")


def _span(text: str, units, first: int, last: int) -> str:
    return text[units[first].start : units[last].end] or "∅"


def _word_axis(text: str, units, word_ids: list[int], per_cell: int) -> _Axis:
    """One cell per word (``per_cell=1``) or per run of ``per_cell`` consecutive words."""
    words = [k for k in range(len(units)) if k == 0 or word_ids[k] != word_ids[k - 1]]
    starts = words[::per_cell]
    ends = [*starts[1:], len(units)]
    labels = [_span(text, units, a, b - 1) for a, b in zip(starts, ends, strict=True)]
    if per_cell == 1:
        return _Axis(labels, starts, "words")
    short = [label if len(label) <= GROUP_LABEL else label[: GROUP_LABEL - 1].rstrip() + "…" for label in labels]
    return _Axis(short, starts, f"runs of {per_cell} words")


def _word_count(word_ids: list[int]) -> int:
    return sum(1 for k in range(len(word_ids)) if k == 0 or word_ids[k] != word_ids[k - 1])


def words_per_cell(rows: int, cols: int) -> tuple[int, int]:
    """Words per cell on each side so that neither side passes MAX_SIDE and the cells stay within MAX_CELLS."""
    k_rows, k_cols = max(1, math.ceil(rows / MAX_SIDE)), max(1, math.ceil(cols / MAX_SIDE))
    while math.ceil(rows / k_rows) * math.ceil(cols / k_cols) > MAX_CELLS:
        if math.ceil(rows / k_rows) >= math.ceil(cols / k_cols):
            k_rows += 1
        else:
            k_cols += 1
    return k_rows, k_cols


def _axes(e: Explanation, word_ids: tuple[list[int], list[int]]) -> tuple[_Axis, _Axis]:
    (c_ids, r_ids), cand, ref = word_ids, e.candidate_units, e.reference_units
    if max(len(cand), len(ref)) <= TOKEN_AXES:
        return _token_axis(cand, c_ids), _token_axis(ref, r_ids)
    k_rows, k_cols = words_per_cell(_word_count(c_ids), _word_count(r_ids))
    return _word_axis(e.candidate, cand, c_ids, k_rows), _word_axis(e.reference, ref, r_ids, k_cols)


def _cells(sim: np.ndarray, rows: _Axis, cols: _Axis) -> np.ndarray:
    """The highest similarity within each block of tokens."""
    if not sim.size:
        return sim
    return np.maximum.reduceat(np.maximum.reduceat(sim, rows.starts, axis=0), cols.starts, axis=1)


def similarity_figure(explanation: Explanation, *, annotate: bool | None = None, kind: str | None = None):
    """A matplotlib ``Figure`` of the similarity matrix of a token-level :class:`Explanation`.

    Tokens on the axes for short texts, words or runs of words for long ones (see the module's notes); the
    figure is at most about 6,300 pixels on its long side at 100 dpi. ``annotate`` writes each cell's value (default: when
    there are at most 400 cells); ``kind`` (``"raw"`` or ``"rescaled"``) is added to the title and the colour bar.

    Raises:
        ValueError: the explanation is not token level.
        ImportError: matplotlib is missing (``pip install fastbertscore[plot]``).
    """
    if explanation.similarity is None or explanation.word_ids is None:  # both are set at token level only
        raise ValueError("a heatmap needs a token-level explanation: explain(..., level='token')")
    try:
        # A bare Figure, not pyplot: pyplot keeps every figure alive until closed, which leaks in a server.
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("the heatmap needs matplotlib: pip install 'fastbertscore[plot]'") from None
    rows, cols = _axes(explanation, explanation.word_ids)
    sim = _cells(explanation.similarity.numpy(), rows, cols)
    small = max(sim.shape) <= 40
    row_in, col_in, font = (0.45, 0.55, 10) if small else (0.2, 0.2, 7)
    fig = Figure(figsize=(max(4.0, col_in * len(cols.labels) + 2.5), max(3.0, row_in * len(rows.labels) + 2)))
    ax = fig.subplots()
    image = ax.imshow(
        sim,
        cmap="Blues",
        vmin=min(0.0, float(sim.min())) if sim.size else 0,
        vmax=1,
        aspect="auto",
        interpolation="nearest",
    )
    tall = len(rows.labels) > 40  # the reference's labels on top, where they are seen without scrolling
    if tall:
        ax.xaxis.tick_top()
        ax.xaxis.set_label_position("top")
    ax.set_xticks(
        range(len(cols.labels)),
        cols.labels,
        rotation=45,
        ha="left" if tall else "right",
        rotation_mode="anchor",
        fontsize=font,
    )
    ax.set_yticks(range(len(rows.labels)), rows.labels, fontsize=font)
    # A long side's axis title sits at its start, where a box that scrolls shows it first (at the middle of a
    # 5,000-pixel side it was out of sight).
    wide = len(cols.labels) > 40
    ax.set_xlabel(f"Reference ({cols.unit})", loc="left" if wide else "center")
    ax.set_ylabel(f"Candidate ({rows.unit})", loc="top" if tall else "center")
    suffix = f" ({kind})" if kind else ""
    e = explanation
    ax.set_title(f"P={e.precision:.3f}  R={e.recall:.3f}  F1={e.f1:.3f}{suffix}", loc="left" if wide else "center")
    if annotate if annotate is not None else sim.size <= 400:
        for i in range(sim.shape[0]):
            for j in range(sim.shape[1]):
                ax.text(
                    j,
                    i,
                    f"{sim[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="w" if sim[i, j] > 0.6 else "k",
                )
    fig.colorbar(image, ax=ax, fraction=0.03 if small else 0.02, pad=0.02, label=f"similarity{suffix}")
    fig.tight_layout()
    return fig
