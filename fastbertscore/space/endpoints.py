"""The page's endpoints, what Gradio calls: each declares the arguments its API names and calls its handler
(:mod:`fastbertscore.space.handlers`), the handler's checks on the request's own thread and its job on the model
thread; the view it returns becomes the tab's outputs. Imported only by :mod:`fastbertscore.space.demo` (Gradio).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr

from fastbertscore.models.defaults import DEFAULT_MODEL
from fastbertscore.space import handlers, tables
from fastbertscore.space.runner import Run, SpaceError, run_job, user_errors
from fastbertscore.space.tables import Table
from fastbertscore.space.uploads import Upload
from fastbertscore.space.views import BatchView, CompareView, Options, PairView

Result = TypeVar("Result")


def _table(header_rows: Table, **options: Any) -> gr.Dataframe:
    return gr.Dataframe(value=header_rows[1], headers=header_rows[0], **options)


def _show_pair(view: PairView) -> tuple:
    return (
        _table(view.scores),
        gr.Textbox(view.hashcode, label=f"Hash code ({view.kind} scores)"),
        view.counted,
        view.note,
        view.heatmap,
        gr.HighlightedText(view.missing, color_map=handlers.colours(view.cut_at)),
        _table(view.matches),
    )


def _show_batch(view: BatchView) -> tuple:
    header = view.results[0]
    return (
        _table(view.results, max_chars=tables.SHORT_TEXT, wrap=True, column_widths=tables.column_widths(header)),
        view.download,
        view.summary,
        view.histogram,
    )


def _show_compare(view: CompareView) -> tuple:
    return _table(view.table), view.summary, view.chart


def _served(name: str, request: gr.Request | None, handler: Callable[[Run[Any]], Result]) -> Result:
    """Call ``handler`` (a handler with every argument but its ``run`` given) as the page does: its checks here, on
    the request's own thread (a refusal never waits for the model), its job on the model thread for the visitor's
    session (one at a time), any failure one message."""
    session = getattr(request, "session_hash", None)
    try:
        return user_errors(handler, name)(lambda job: run_job(job, name, session))
    except SpaceError as error:
        raise gr.Error(str(error)) from None


# The endpoints: each declares the arguments its API names (a tab's own boxes, then the shared settings boxes, in
# OPTION_NAMES order, their defaults Options'); Gradio passes the request (its session), which no API lists.


def score_pair(
    candidate: str | None,
    references: str | None,
    model: str | None = Options.model,
    layer: str | int | None = Options.layer,
    lang: str | None = Options.lang,
    idf: bool = Options.idf,
    do_rescale: bool = Options.do_rescale,
    dtype: str | None = Options.dtype,
    request: gr.Request | None = None,
) -> tuple:
    """The Pair tab (:func:`~fastbertscore.space.handlers.score_pair`)."""
    options = Options(model, layer, lang, idf, do_rescale, dtype)
    view = _served("score_pair", request, lambda run: handlers.score_pair(candidate, references, options, run))
    return _show_pair(view)


def score_file(
    file: Upload | None,
    cand_column: str,
    ref_columns: str,
    model: str | None = Options.model,
    layer: str | int | None = Options.layer,
    lang: str | None = Options.lang,
    idf: bool = Options.idf,
    do_rescale: bool = Options.do_rescale,
    dtype: str | None = Options.dtype,
    request: gr.Request | None = None,
) -> tuple:
    """The Batch tab (:func:`~fastbertscore.space.handlers.score_file`)."""
    options = Options(model, layer, lang, idf, do_rescale, dtype)
    view = _served("score_file", request, lambda run: handlers.score_file(file, cand_column, ref_columns, options, run))
    return _show_batch(view)


def compare(
    ref_file: Upload | None,
    ref_text: str | None,
    system_files: list[Upload] | None,
    systems_text: str | None,
    test: str,
    n_samples: float | None,
    seed: float | None,
    model: str | None = Options.model,
    layer: str | int | None = Options.layer,
    lang: str | None = Options.lang,
    idf: bool = Options.idf,
    do_rescale: bool = Options.do_rescale,
    dtype: str | None = Options.dtype,
    request: gr.Request | None = None,
) -> tuple:
    """The Compare systems tab (:func:`~fastbertscore.space.handlers.compare_systems`)."""
    options = Options(model, layer, lang, idf, do_rescale, dtype)
    boxes = (ref_file, ref_text, system_files, systems_text, test, n_samples, seed, options)
    return _show_compare(_served("compare", request, lambda run: handlers.compare_systems(*boxes, run=run)))


def score_api(
    candidate: str,
    reference: str,
    model: str = DEFAULT_MODEL,
    num_layers: str = "",
    lang: str = "en",
    idf: bool = False,
    dtype: str = "float32",
    request: gr.Request | None = None,
) -> dict[str, object]:
    """The ``score`` API endpoint (:func:`~fastbertscore.space.handlers.score_api`)."""
    return _served(
        "score", request, lambda run: handlers.score_api(candidate, reference, model, num_layers, lang, idf, dtype, run)
    )
