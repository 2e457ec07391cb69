"""The heatmap (explanations/plot.py): tokens for short pairs, words or runs of words for long ones, and an image
that encodes at every length the Space accepts (a 3,990-character candidate made a figure of
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


def _labels(fig, side: str) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts if t.get_gid() == f"{side}-label"]


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
    rows, _ = _check(e, fig)
    assert len(rows) == len(e.candidate_units) and fig.axes[0].get_ylabel() == "Candidate (tokens)"
    assert fig.axes[0].get_title().endswith("(raw)") and _labels(fig, "candidate")[:2] == ["The", "president"]


def test_a_long_candidate_shows_words_and_renders(scorer):
    e = fb.explain(LONG, "The committee discussed the budget.", scorer=scorer)
    assert len(e.candidate_units) > plot.TOKEN_AXES
    fig = similarity_figure(e)
    rows, _ = _check(e, fig)
    assert fig.axes[0].get_xlabel() == "Reference (words)" and len(rows) <= plot.MAX_SIDE
    labels = [label.rstrip("…") for label in _labels(fig, "candidate")]
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


#: The Space's heatmap box: 900 pixels high (app.py's CSS), about 1,200 wide in a 1,280-pixel window; it scrolls.
BOX = (1200, 900)


@pytest.mark.parametrize("long_side", ["candidate", "reference"])
def test_axis_titles_of_a_long_heatmap_are_in_sight_without_scrolling(scorer, long_side):
    # A long side's axis title sat at the middle of a 5,000-pixel side, out of the box's sight.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    cand, ref = (LONG, "The committee discussed the budget.")[:: 1 if long_side == "candidate" else -1]
    fig = similarity_figure(fb.explain(cand, ref, scorer=scorer), kind="raw")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # as the Space's PNG is drawn
    renderer, ax = canvas.get_renderer(), fig.axes[0]
    height = fig.get_size_inches()[1] * fig.dpi
    titles = [t for t in ax.get_children() if isinstance(t, Text) and t.get_text().startswith("P=")]
    assert len(titles) == 1
    for text in (ax.xaxis.label, ax.yaxis.label, *titles):
        box = text.get_window_extent(renderer)  # pixels from the bottom left
        assert box.x0 >= 0 and box.x1 <= BOX[0] and box.y0 >= height - BOX[1] and box.y1 <= height, (
            text.get_text(),
            box,
            height,
        )


ONE_WORD = ("a", "b")
URLS = ("see https://example.com/a/very/long/path/that/never/ends/index.html and " * 3, "a link")


@pytest.mark.parametrize(
    "cand, ref",
    [
        ONE_WORD,  # a title wider than its grid: it once ran off the figure's left edge
        ("The president met the minister in Paris.", "The president met the prime minister."),
        (LONG, "The committee discussed the budget."),
        ("The committee discussed the budget.", LONG),
        (LONG, OTHER),
        URLS,  # long single-word labels
        (" ".join(["word"] * 70 + ["x" * 200]), "a reference"),  # one 200-character word on a word axis
    ],
    ids=["one-word", "short", "long-candidate", "long-reference", "both-long", "long-labels", "long-word"],
)
def test_no_text_is_cut_off_or_overlaps_a_title(scorer, cand, ref):
    # The layout is computed from the labels' measured widths (no tight_layout): every label, axis title and the
    # figure title must still be inside the figure, and no title may cover a label or another title.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    fig = similarity_figure(fb.explain(cand, ref, scorer=scorer), kind="rescaled")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer, (ax, bar) = canvas.get_renderer(), fig.axes
    width, height = fig.get_size_inches() * fig.dpi
    drawn = [t for t in fig.findobj(Text) if t.get_text() and t.get_visible()]
    in_range = [t for t in bar.get_yticklabels() if 0 <= t.get_position()[1] <= 1]  # the bar draws only these
    drawn = [t for t in drawn if t not in bar.get_yticklabels() or t in in_range]
    for text in drawn:
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, (text.get_text(), box)
    titles = [t for t in (ax.xaxis.label, ax.yaxis.label, bar.yaxis.label, *drawn) if t.get_text().startswith("P=")]
    titles += [ax.xaxis.label, ax.yaxis.label, bar.yaxis.label]
    labels = [t for t in drawn if t.get_gid() in ("candidate-label", "reference-label")] + in_range
    for title in titles:
        box = title.get_window_extent(renderer)
        for other in [*labels, *(t for t in titles if t is not title)]:
            assert not box.overlaps(other.get_window_extent(renderer)), (title.get_text(), other.get_text())


def test_a_long_heatmap_has_no_tick_artists(scorer):
    # Matplotlib's ticks (five artists each, measured again at every draw) took most of a long
    # pair's time in the Space; labels are plain texts, one per cell. Its latency: benchmarks/space_latency_results.md.
    fig = similarity_figure(fb.explain(LONG, "The committee discussed the budget.", scorer=scorer))
    ax = fig.axes[0]
    assert len(ax.xaxis.get_major_ticks()) == len(ax.yaxis.get_major_ticks()) == 0
    assert len(_labels(fig, "candidate")) == ax.images[0].get_array().shape[0]
    assert len(_labels(fig, "reference")) == ax.images[0].get_array().shape[1]
