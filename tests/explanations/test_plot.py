"""The heatmap (explanations/plot.py): tokens for short pairs, words or runs of words for long ones, and an image
that encodes at every length the Space accepts (issue 32, item 1: a 3,990-character candidate made a figure of
860 × 23,130 pixels, past WebP's 16,383)."""

from __future__ import annotations

import io

import pytest

import fastbertscore as fb
from fastbertscore.explanations import plot
from fastbertscore.explanations.plot import similarity_figure

LONG = ("The committee discussed the budget and the plans for next year. " * 62)[:3990]
OTHER = ("Members of the board argued about money, schools, roads and the new hospital until late at night. " * 41)[
    :4000
]
WEBP_LIMIT = 16383


@pytest.fixture(scope="module")
def scorer():
    return fb.BERTScorer(model_type=fb.DEFAULT_MODEL)


def _blocks(word_ids: list[int], per_cell: int | None) -> list[list[int]]:
    """Token indices of each cell, built here from the word ids (not with plot.py's own helpers)."""
    words: list[list[int]] = []
    for k, w in enumerate(word_ids):
        if k and w == word_ids[k - 1]:
            words[-1].append(k)
        else:
            words.append([k])
    if per_cell is None:
        return [[k] for k in range(len(word_ids))]
    return [[k for word in words[i : i + per_cell] for k in word] for i in range(0, len(words), per_cell)]


def _per_cell(label: str) -> int | None:
    if label.endswith("(tokens)"):
        return None
    return 1 if label.endswith("(words)") else int(label.split("runs of ")[1].split()[0])


def _check(e, fig):
    ax = fig.axes[0]
    cells = ax.images[0].get_array()
    rows = _blocks(e.word_ids[0], _per_cell(ax.get_ylabel()))
    cols = _blocks(e.word_ids[1], _per_cell(ax.get_xlabel()))
    assert cells.shape == (len(rows), len(cols))
    for i in range(0, len(rows), 7):  # every 7th row, all columns: the highest token similarity of the block
        for j, col in enumerate(cols):
            assert cells[i, j] == float(e.similarity[rows[i]][:, col].max())
    width, height = fig.get_size_inches() * fig.dpi
    assert max(width, height) < WEBP_LIMIT
    image = io.BytesIO()
    fig.savefig(image, format="webp")  # what gr.Plot does by default; it raised for long texts
    assert image.getbuffer().nbytes > 1000
    return rows, cols


def test_a_short_pair_shows_tokens(scorer):
    e = fb.explain("The president met the minister in Paris.", "The president met the prime minister.", scorer=scorer)
    fig = similarity_figure(e, kind="raw")
    rows, _cols = _check(e, fig)
    assert len(rows) == len(e.candidate_units) and fig.axes[0].get_ylabel() == "Candidate (tokens)"
    assert fig.axes[0].get_title().endswith("(raw)") and [t.get_text() for t in fig.axes[0].get_yticklabels()][:2] == [
        "The",
        "president",
    ]


def test_a_long_candidate_shows_words_and_renders(scorer):
    e = fb.explain(LONG, "The committee discussed the budget.", scorer=scorer)
    assert len(e.candidate_units) > plot.TOKEN_AXES
    fig = similarity_figure(e)
    rows, _cols = _check(e, fig)
    assert fig.axes[0].get_xlabel() == "Reference (words)" and len(rows) <= plot.MAX_SIDE
    labels = [t.get_text().rstrip("…") for t in fig.axes[0].get_yticklabels()]
    assert all(label in LONG for label in labels)  # each label is the text of its words


def test_two_long_texts_group_words_within_the_cell_budget(scorer):
    e = fb.explain(LONG, OTHER, scorer=scorer)
    fig = similarity_figure(e)
    rows, cols = _check(e, fig)
    assert len(rows) * len(cols) <= plot.MAX_CELLS and "runs of" in fig.axes[0].get_ylabel() + fig.axes[0].get_xlabel()


@pytest.mark.parametrize("rows, cols", [(10, 10), (301, 5), (5, 301), (2000, 2000), (95, 95), (96, 96)])
def test_cells_stay_within_the_budget(rows, cols):
    k_rows, k_cols = plot.words_per_cell(rows, cols)
    shown = (-(-rows // k_rows), -(-cols // k_cols))
    assert max(shown) <= plot.MAX_SIDE and shown[0] * shown[1] <= plot.MAX_CELLS
    if rows * cols <= plot.MAX_CELLS and max(rows, cols) <= plot.MAX_SIDE:
        assert (k_rows, k_cols) == (1, 1)
