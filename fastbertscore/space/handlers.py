"""What each of the Space's buttons does, as plain functions: boxes in, numbers, tables and figures out.

The page (:mod:`fastbertscore.space.demo`) runs them on the model thread and lays out what they return; a test
calls them directly, with no browser and no Gradio. Bad input raises ``ValueError``/``TypeError`` naming the box
and the limit, before any model work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Any, cast

from fastbertscore.explanations.explanation import explain
from fastbertscore.pipeline.defaults import DEFAULT_MODEL
from fastbertscore.result import ScoreResult
from fastbertscore.scorer import BERTScorer
from fastbertscore.settings import Settings
from fastbertscore.significance import Comparison, compare
from fastbertscore.space import tables
from fastbertscore.space.allowed import check_allowed_model
from fastbertscore.space.api import check_score_arguments, score_json
from fastbertscore.space.charts import f1_chart, histogram
from fastbertscore.space.inputs import (
    batch_pairs,
    check_text,
    cut_note,
    is_cut,
    parse_layer,
    parse_references,
    reference_columns,
)
from fastbertscore.space.limits import CACHE_MB, MAX_SYSTEMS, check_box, check_samples
from fastbertscore.space.models import of_kind, scorer_of_kind, space_scorer
from fastbertscore.space.runner import SpaceError, first_line
from fastbertscore.space.systems import check_systems, gather_systems, parse_lines
from fastbertscore.space.uploads import check_size, lines_of, rows_of, write_results
from fastbertscore.space.words import reference_words
from fastbertscore.validate import check_hub_model_id

logger = logging.getLogger(__name__)

#: The Compare tab's tests, as its dropdown names them.
TESTS = {"paired bootstrap": "bs", "approximate randomization": "ar", "none (intervals only)": None}
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
Table = tuple[list[str], list[list]]


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
    heatmap: object  # a matplotlib Figure
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
    histogram: object
    result: ScoreResult


@dataclass(frozen=True)
class CompareView:
    """The Compare tab's outputs."""

    table: Table
    summary: str
    chart: object
    comparison: Comparison


def scorer_for(options: Options, idf_sents: list[str] | None, rescaled: bool = False) -> tuple[BERTScorer, str]:
    """The Space's scorer for these boxes (it rescales where the language has a baseline: raw requests read the
    raw numbers of the same result) and a note when rescaled numbers were asked for but cannot be shown."""
    model_id = (options.model or "").strip() or DEFAULT_MODEL
    settings = Settings(
        model_type=check_allowed_model(check_hub_model_id(model_id)),  # a path first: never a folder
        num_layers=parse_layer(options.layer),
        cache_mb=CACHE_MB,
        lang=(options.lang or "").strip() or None,
        idf=idf_sents is not None,
        idf_sents=None if idf_sents is None else tuple(idf_sents),
        dtype=cast(Any, options.dtype or "float32"),  # Settings checks it against its choices
    )
    try:
        scorer, note = space_scorer(settings)
    except Exception as error:  # unknown ids, model code, devices, no network: the engine's message, one line
        logger.info("loading %s failed", model_id, exc_info=True)
        message = first_line(error)  # the engine's own message names the model; others get its id in front
        raise SpaceError(
            message if model_id in message else f"Could not load the model {model_id!r}: {message}"
        ) from None
    if not rescaled:
        return scorer, ""
    return scorer, note or ("" if settings.lang else "Only raw scores: rescaling needs a language (e.g. en).")


def colours(cut_at: int | None = None) -> dict[str, str]:
    """The missed-words panel's colours: missed words red, a text's part past the model's window grey."""
    return {"missing": "red", **({tables.past_cut_label(cut_at): "gray"} if cut_at else {})}


def score_pair(candidate, references, options: Options | None = None) -> PairView:
    """The Pair tab: one candidate against the reference box's lines, explained against the one that counted."""
    options = options or Options()
    candidate, refs = check_text(candidate, "The candidate"), parse_references(references)
    scorer, note = scorer_for(options, refs if options.idf else None, rescaled=options.do_rescale)
    rescaled = bool(options.do_rescale) and scorer.rescale_with_baseline
    result = of_kind(scorer.score_result([candidate], [refs]), scorer, rescaled)
    best = refs[0] if result.best_reference is None else refs[int(result.best_reference[2][0])]
    # Against the reference that counted for F; similarities of the kind shown.
    tokens = explain(candidate, best, scorer=scorer, level="token", rescaled=rescaled)
    words, missed = reference_words(tokens, rescaled)
    note = " ".join(filter(None, [note, cut_note(scorer, {"candidate": candidate, "reference": best})]))
    cut_at = scorer.token_limit if is_cut(scorer, best) else None
    from fastbertscore.explanations.plot import similarity_figure  # matplotlib, on first use

    return PairView(
        scores=tables.pair_table(result),
        hashcode=result.hash,
        kind=tables.kind(rescaled),
        counted=tables.counted_note(result, len(refs)),
        note=note,
        heatmap=similarity_figure(tokens, kind=tables.kind(rescaled)),
        missing=[*tables.highlight(best, words, missed, cut_at)],
        cut_at=cut_at,
        matches=tables.matches_table(tokens, rescaled),
        result=result,
    )


def score_file(file, cand_column: str, ref_columns: str, options: Options | None = None) -> BatchView:
    """The Batch tab: every row of an uploaded file, a table, a result CSV, the means and a histogram."""
    options = options or Options()
    if file is None:
        raise ValueError("Upload a .csv, .tsv or .jsonl file first")
    reference_columns(ref_columns)  # a box of thousands of columns is refused before the file is read
    cands, refs, groups = batch_pairs(rows_of(file), cand_column, ref_columns)
    idf_sents = [r for g in groups for r in g] if options.idf else None
    scorer, note = scorer_for(options, idf_sents, rescaled=options.do_rescale)
    result = of_kind(scorer.score_result(cands, refs), scorer, bool(options.do_rescale))
    header, rows = tables.batch_table(cands, groups, result)
    summary = tables.batch_summary(result, scorer.signature) + (f"  \n{note}" if note else "")
    return BatchView(
        (header, rows),
        write_results([header, *rows]),
        summary,
        histogram(result.scores[2].tolist(), result.rescaled is not None),
        result,
    )


def compare_systems(
    ref_file, ref_text, system_files, systems_text, test, n_samples, seed, options: Options | None = None
) -> CompareView:
    """The Compare tab: corpus scores of 2 to :data:`~fastbertscore.space.limits.MAX_SYSTEMS` systems with 95%
    intervals, each tested against the first."""
    options = options or Options()
    n_samples = check_samples(n_samples)
    system_files = system_files or []
    if len(system_files) > MAX_SYSTEMS:  # before any file is read
        raise ValueError(f"{len(system_files)} system files were uploaded; the Space compares at most {MAX_SYSTEMS}")
    for file in [ref_file, *system_files] if ref_file is not None else system_files:
        check_size(file)
    check_box(ref_text, "The references box")
    check_box(systems_text, "The systems box")
    refs = lines_of(ref_file)[1] if ref_file is not None else parse_lines(ref_text)
    systems = gather_systems([lines_of(file) for file in system_files], systems_text)
    check_systems(systems, refs)
    scorer, note = scorer_for(options, refs if options.idf else None, rescaled=options.do_rescale)
    scorer = scorer_of_kind(scorer, bool(options.do_rescale))
    result = compare(
        systems,
        refs,
        test=TESTS.get(test, "bs"),
        n_samples=n_samples,
        seed=int(seed),
        scorer=scorer,
    )
    rescaled = scorer.rescale_with_baseline
    summary = tables.compare_summary(result, len(refs), rescaled) + (f"  \n{note}" if note else "")
    return CompareView(tables.compare_table(result, rescaled), summary, f1_chart(result, rescaled), result)


def score(
    candidate: str,
    reference: str,
    model: str = DEFAULT_MODEL,
    num_layers: str = "",
    lang: str = "en",
    idf: bool = False,
    dtype: str = "float32",
) -> dict:
    """API endpoint: BERTScore of one candidate against one reference (several references: one per line)."""
    check_score_arguments(
        candidate=candidate, reference=reference, model=model, num_layers=num_layers, lang=lang, idf=idf, dtype=dtype
    )
    candidate, refs = check_text(candidate, "The candidate"), parse_references(reference)
    options = Options(model, num_layers, lang, idf, False, dtype)
    scorer, _ = scorer_for(options, refs if idf else None)
    result: ScoreResult = of_kind(scorer.score_result([candidate], [refs]), scorer, False)
    return score_json(result)
