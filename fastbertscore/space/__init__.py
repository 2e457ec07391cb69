"""What the Space shows, without Gradio: the checks of its text boxes, the pasted-systems parser, the result tables and summaries, the charts
and the JSON of the ``score`` endpoint. ``app.py`` only lays these out; each is tested here without a browser.

Every number these build says whether it is raw or rescaled (:func:`~fastbertscore.space.tables.kind`), and a
summary shows each kind of mean next to the hash code of that kind.
"""

from fastbertscore.space.api import check_score_arguments, score_json
from fastbertscore.space.charts import f1_chart, histogram
from fastbertscore.space.inputs import batch_pairs, check_text, cut_note, is_cut, parse_layer, parse_references
from fastbertscore.space.models import no_baseline_note, of_kind, raw_hash, scorer_of_kind, space_scorer
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
from fastbertscore.space.words import reference_words

__all__ = [
    "EMPTY_LINE",
    "PAIR_HEADER",
    "SHORT_TEXT",
    "batch_header",
    "batch_pairs",
    "batch_summary",
    "batch_table",
    "check_score_arguments",
    "check_systems",
    "check_text",
    "column_widths",
    "compare_header",
    "compare_summary",
    "compare_table",
    "counted_note",
    "cut_note",
    "f1_chart",
    "gather_systems",
    "highlight",
    "histogram",
    "is_cut",
    "kind",
    "matches_header",
    "matches_table",
    "no_baseline_note",
    "of_kind",
    "pair_table",
    "parse_layer",
    "parse_lines",
    "parse_references",
    "parse_systems",
    "past_cut_label",
    "raw_hash",
    "reference_words",
    "score_json",
    "scorer_of_kind",
    "space_scorer",
]
