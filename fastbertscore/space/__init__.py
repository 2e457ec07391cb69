"""The Space: what each button does (:mod:`~fastbertscore.space.handlers`, plain functions a test calls without a
browser), the checks of its boxes, the pasted-systems parser, the result tables and summaries, the charts, the JSON
of the ``score`` endpoint, its limits, and the page itself (:func:`build_demo`). ``app.py`` builds and launches it.

Importing this package imports no Gradio (an optional extra) and makes no folder: :func:`build_demo` imports the
page's module, the only one that needs Gradio, when it is called.

Every number these build says whether it is raw or rescaled (:func:`~fastbertscore.space.tables.kind`), and a
summary shows each kind of mean next to the hash code of that kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastbertscore.space.allowed import (
    MAX_PARAMETERS,
    MODELS_VARIABLE,
    allowed_models,
    check_allowed_model,
    fits_space,
    published_baseline_models,
)
from fastbertscore.space.api import check_score_arguments, score_json
from fastbertscore.space.charts import f1_chart, histogram
from fastbertscore.space.handlers import (
    compare_systems,
    score_api,
    score_file,
    score_pair,
    settings_for,
)
from fastbertscore.space.inputs import (
    batch_pairs,
    check_text,
    cut_note,
    is_cut,
    parse_layer,
    parse_references,
    reference_columns,
)
from fastbertscore.space.limits import (
    CACHE_MB,
    DEADLINE_S,
    JOBS_PER_SESSION,
    KEEP_RESULTS_S,
    LIMITS,
    MAX_CHARS,
    MAX_NOTE_BYTES,
    MAX_NOTES,
    MAX_PAIRS,
    MAX_REFERENCES,
    MAX_REQUEST_BYTES,
    MAX_RESULT_FILES,
    MAX_ROWS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_SYSTEMS,
    MAX_TOKENIZERS,
    MAX_UPLOAD_BYTES,
    SMALL_WORK,
    WORK_BUDGET,
)
from fastbertscore.space.models import (
    NOTES,
    load_scorer,
    no_baseline_note,
    note_key,
    of_kind,
    raw_hash,
    scorer_of_kind,
    space_scorer,
)
from fastbertscore.space.runner import Job, SpaceError, hide_paths, on_model_thread
from fastbertscore.space.systems import EMPTY_LINE, check_systems, gather_systems, parse_lines, parse_systems
from fastbertscore.space.tables import (
    PAIR_HEADER,
    SHORT_TEXT,
    batch_header,
    batch_summary,
    batch_table,
    column_widths,
    compare_header,
    compare_summary,
    compare_table,
    counted_note,
    highlight,
    kind,
    matches_header,
    matches_table,
    pair_table,
    past_cut_label,
)
from fastbertscore.space.views import EXAMPLES, OPTION_NAMES, TESTS, BatchView, CompareView, Options, PairView
from fastbertscore.space.words import reference_words

if TYPE_CHECKING:
    import gradio as gr


def build_demo() -> gr.Blocks:
    """The Space's page (a ``gradio.Blocks``), not yet launched: see :func:`fastbertscore.space.demo.build_demo`.
    Gradio is imported here, on the first call."""
    from fastbertscore.space import demo

    return demo.build_demo()


def launch(demo: gr.Blocks, **options: Any) -> None:
    """Serve the page of :func:`build_demo` with the Space's stylesheet and limits."""
    from fastbertscore.space import demo as page

    page.launch(demo, **options)


__all__ = [
    "CACHE_MB",
    "DEADLINE_S",
    "EMPTY_LINE",
    "EXAMPLES",
    "JOBS_PER_SESSION",
    "KEEP_RESULTS_S",
    "LIMITS",
    "MAX_CHARS",
    "MAX_NOTES",
    "MAX_NOTE_BYTES",
    "MAX_PAIRS",
    "MAX_PARAMETERS",
    "MAX_REFERENCES",
    "MAX_REQUEST_BYTES",
    "MAX_RESULT_FILES",
    "MAX_ROWS",
    "MAX_SAMPLES",
    "MAX_SEED",
    "MAX_SYSTEMS",
    "MAX_TOKENIZERS",
    "MAX_UPLOAD_BYTES",
    "MODELS_VARIABLE",
    "NOTES",
    "OPTION_NAMES",
    "PAIR_HEADER",
    "SHORT_TEXT",
    "SMALL_WORK",
    "TESTS",
    "WORK_BUDGET",
    "BatchView",
    "CompareView",
    "Job",
    "Options",
    "PairView",
    "SpaceError",
    "allowed_models",
    "batch_header",
    "batch_pairs",
    "batch_summary",
    "batch_table",
    "build_demo",
    "check_allowed_model",
    "check_score_arguments",
    "check_systems",
    "check_text",
    "column_widths",
    "compare_header",
    "compare_summary",
    "compare_systems",
    "compare_table",
    "counted_note",
    "cut_note",
    "f1_chart",
    "fits_space",
    "gather_systems",
    "hide_paths",
    "highlight",
    "histogram",
    "is_cut",
    "kind",
    "launch",
    "load_scorer",
    "matches_header",
    "matches_table",
    "no_baseline_note",
    "note_key",
    "of_kind",
    "on_model_thread",
    "pair_table",
    "parse_layer",
    "parse_lines",
    "parse_references",
    "parse_systems",
    "past_cut_label",
    "published_baseline_models",
    "raw_hash",
    "reference_columns",
    "reference_words",
    "score_api",
    "score_file",
    "score_json",
    "score_pair",
    "scorer_of_kind",
    "settings_for",
    "space_scorer",
]
