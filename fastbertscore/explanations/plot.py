"""Heatmap of candidate × reference similarities (matplotlib is imported only here).

Short texts show one cell per token. Past :data:`TOKEN_AXES` tokens on either side the axes show words (a
cell is the highest token similarity of the two words), and past :data:`MAX_CELLS` cells, or :data:`MAX_SIDE`
on one side, runs of consecutive words (again the highest similarity of the run), so the figure stays readable
and small enough to draw quickly and to encode as an image at any length (WebP stops at 16,383 pixels).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from fastbertscore.explanations.explanation import Explanation, Unit

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TOKEN_AXES = 60  # tokens on a side before the axes switch to words
MAX_SIDE = 300  # cells on one side at most
MAX_CELLS = 5_000  # cells in all at most (drawing and encoding time grows with them)
GROUP_LABEL = 24  # characters of a run of words shown as its label
WORD_LABEL = 40  # characters of one word shown as its label


@dataclass(frozen=True)
class _Axis:
    labels: list[str]
    starts: list[int]  # index of the first token of each cell
    unit: str  # what a cell is: "tokens", "words" or "runs of K words"


def _token_axis(units: list[Unit], word_ids: list[int]) -> _Axis:
    """Token texts; a piece that continues the previous token's word is marked "##"."""
    labels = [("##" if k > 0 and word_ids[k] == word_ids[k - 1] else "") + (u.text or "∅") for k, u in enumerate(units)]
    return _Axis(labels, list(range(len(units))), "tokens")


def _span(text: str, units: list[Unit], first: int, last: int) -> str:
    return text[units[first].start : units[last].end] or "∅"


def _shorten(label: str, most: int) -> str:
    return label if len(label) <= most else label[: most - 1].rstrip() + "…"


def _word_axis(text: str, units: list[Unit], word_ids: list[int], per_cell: int) -> _Axis:
    """One cell per word (``per_cell=1``) or per run of ``per_cell`` consecutive words."""
    words = [k for k in range(len(units)) if k == 0 or word_ids[k] != word_ids[k - 1]]
    starts = words[::per_cell]
    ends = [*starts[1:], len(units)]
    labels = [_span(text, units, a, b - 1) for a, b in zip(starts, ends, strict=True)]
    if per_cell == 1:  # a very long word (a URL) is cut too, or it alone would widen the figure by inches
        return _Axis([_shorten(label, WORD_LABEL) for label in labels], starts, "words")
    short = [_shorten(label, GROUP_LABEL) for label in labels]
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


# Layout, in inches. matplotlib's tight_layout measures every tick label, and drawing measures them again to place
# the axis titles: with hundreds of labels that is most of a long pair's drawing time. Here each label's width is
# the sum of its characters' advances (measured once per character) and everything is placed from that.
_EDGE, _TICK, _TITLE_GAP = 0.12, 0.1, 0.06  # figure edge; tick length and pad; gap before an axis title
_ABOVE = 0.14  # the figure title's gap above what is under it (the colour bar's top label reaches 0.07 up)
_LABEL_H, _TITLE_H = 0.2, 0.3  # an axis title's height (10 pt), the figure title's (12 pt)
_BAR_GAP, _BAR_W, _BAR_RIGHT = 0.15, 0.15, 0.9  # colour bar: gap, width, its tick labels and title


@dataclass(frozen=True)
class _Box:
    size: tuple[float, float]  # figure width, height
    axes: tuple[float, float, float, float]  # left, bottom, width, height as fractions of the figure
    colorbar: tuple[float, float, float, float]
    xlabel_y: float  # axis titles and the figure title, in axes fractions
    ylabel_x: float
    title_y: float
    title_loc: Literal["left", "center"]  # "left" where the title is wider than the grid or the grid is wide


@functools.lru_cache(maxsize=4096)
def _advance(ch: str, size: float) -> float:
    """A character's advance in points at ``size`` points (measured once per process, not per figure)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    return text_to_path.get_text_width_height_descent(ch, FontProperties(size=size), ismath=False)[0]


def _width_in(labels: list[str], size: float) -> float:
    """Width in inches of the widest label at ``size`` points (kerning ignored: a few hundredths of an inch)."""
    return max((sum(_advance(ch, size) for ch in label) for label in labels), default=0.0) / 72


def _layout(
    row_labels: list[str],
    col_labels: list[str],
    font: float,
    tall: bool,
    wide: bool,
    cells: tuple[float, float],
    title: str,
) -> _Box:
    """Figure size and positions around a grid of ``cells`` (width, height): room for the row labels on the left,
    the column labels (rotated 45°) on top when ``tall`` else below, axis titles, the title (12 pt; at the left
    when ``wide`` or wider than the grid) and the colour bar."""
    line = font * 1.2 / 72
    y_labels = _width_in(row_labels, font) + _TICK
    x_along = _width_in(col_labels, font) * math.sqrt(0.5)  # a rotated label's reach, across and along the axis
    x_across = x_along + line * math.sqrt(0.5) + _TICK
    below_title = x_across + _TITLE_GAP + _LABEL_H
    left = max(_EDGE + _LABEL_H + _TITLE_GAP + y_labels, _EDGE + (0 if tall else x_along))
    right = max(_BAR_GAP + _BAR_W + _BAR_RIGHT, (x_along if tall else 0) + _EDGE)
    top = _EDGE + _TITLE_H + (below_title + _TITLE_GAP if tall else _ABOVE)
    bottom = _EDGE + (0.05 if tall else below_title)
    width = max(4.0, cells[0] + left + right)
    title_w = _width_in([title], 12)
    title_loc: Literal["left", "center"] = "left" if wide or title_w > width - left - right else "center"
    width = max(width, left + title_w + _EDGE)
    height = max(3.0, cells[1] + top + bottom)
    grid_w, grid_h = width - left - right, height - top - bottom
    title_y = 1 + ((below_title + _TITLE_GAP) if tall else _ABOVE) / grid_h
    return _Box(
        size=(width, height),
        axes=(left / width, bottom / height, grid_w / width, grid_h / height),
        colorbar=((left + grid_w + _BAR_GAP) / width, bottom / height, _BAR_W / width, grid_h / height),
        xlabel_y=(1 + (x_across + _TITLE_GAP) / grid_h) if tall else -(x_across + _TITLE_GAP) / grid_h,
        ylabel_x=-(y_labels + _TITLE_GAP) / grid_w,
        title_y=title_y,
        title_loc=title_loc,
    )


def _label_cells(ax: Axes, rows: list[str], cols: list[str], font: float, tall: bool) -> None:
    """Each row's and column's label beside its cell, as plain text (``gid`` "candidate-label" / "reference-label").

    They read as tick labels, but matplotlib's ticks are five artists each, built by deep copies and measured
    again at each draw, which for hundreds of them costs much of a long pair's heatmap time.
    """
    from matplotlib.transforms import ScaledTranslation

    ax.set_xticks([])
    ax.set_yticks([])
    figure = ax.get_figure()
    assert figure is not None  # the axes were added to a figure
    inches = figure.dpi_scale_trans
    left = ax.get_yaxis_transform() + ScaledTranslation(-_TICK, 0, inches)
    for i, label in enumerate(rows):
        ax.text(0, i, label, transform=left, ha="right", va="center_baseline", fontsize=font, gid="candidate-label")
    side = ax.get_xaxis_transform() + ScaledTranslation(0, _TICK if tall else -_TICK, inches)
    for j, label in enumerate(cols):
        ax.text(
            j,
            1 if tall else 0,
            label,
            transform=side,
            rotation=45,
            rotation_mode="anchor",
            ha="left" if tall else "right",
            va="bottom" if tall else "top",
            fontsize=font,
            gid="reference-label",
        )


def _axis_titles(ax: Axes, box: _Box, xlabel: str, ylabel: str, tall: bool, wide: bool) -> None:
    """Axis titles placed from the measured labels (see :func:`_layout`), so drawing does not measure hundreds of
    tick labels again to place them. A long side's title sits at its start, where a box that scrolls shows it first
    (at the middle of a 5,000-pixel side it was out of sight)."""
    if tall:
        ax.xaxis.set_label_position("top")
    ax.set_xlabel(xlabel, loc="left" if wide else "center")
    ax.set_ylabel(ylabel, loc="top" if tall else "center")
    ax.xaxis.set_label_coords(0.0 if wide else 0.5, box.xlabel_y)
    ax.yaxis.set_label_coords(box.ylabel_x, 1.0 if tall else 0.5)


def _annotate(ax: Axes, sim: np.ndarray) -> None:
    """Each cell's value written in it (white on dark cells)."""
    for i in range(sim.shape[0]):
        for j in range(sim.shape[1]):
            color = "w" if sim[i, j] > 0.6 else "k"
            ax.text(j, i, f"{sim[i, j]:.2f}", ha="center", va="center", fontsize=7, color=color)


def similarity_figure(explanation: Explanation, *, annotate: bool | None = None, kind: str | None = None) -> Figure:
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
    tall, wide = len(rows.labels) > 40, len(cols.labels) > 40
    e, suffix = explanation, f" ({kind})" if kind else ""
    title = f"P={e.precision:.3f}  R={e.recall:.3f}  F1={e.f1:.3f}{suffix}"
    cells = (col_in * len(cols.labels), row_in * len(rows.labels))
    box = _layout(rows.labels, cols.labels, font, tall, wide, cells, title)
    fig = Figure(figsize=box.size)
    ax = fig.add_axes(box.axes)
    image = ax.imshow(
        sim,
        cmap="Blues",
        vmin=min(0.0, float(sim.min())) if sim.size else 0,
        vmax=1,
        aspect="auto",
        interpolation="nearest",
    )
    _label_cells(ax, rows.labels, cols.labels, font, tall)  # the reference's on top when tall: seen unscrolled
    _axis_titles(ax, box, f"Reference ({cols.unit})", f"Candidate ({rows.unit})", tall, wide)
    ax.set_title(title, loc=box.title_loc, y=box.title_y, pad=0)
    if annotate if annotate is not None else sim.size <= 400:
        _annotate(ax, sim)
    fig.colorbar(image, cax=fig.add_axes(box.colorbar), label=f"similarity{suffix}")
    return fig
