"""Gradio Space for fastbertscore: score a pair (with a heatmap and what the candidate missed), a file, or systems.

UI only: scoring, explanations, tables, charts and the endpoint's JSON come from fastbertscore (``fb.space``).
Run: ``python app.py`` (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT choose where it listens).
"""

from __future__ import annotations

import csv
import functools
import logging
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr

import fastbertscore as fb
from fastbertscore import space

logger = logging.getLogger("fastbertscore.app")
MAX_PAIRS, MAX_CHARS, MAX_SYSTEMS = 2000, 4000, 8  # pairs per file (segments per comparison), per text, systems
CACHE_MB = 16  # the Pair tab embeds its texts to score them and again inside explain(): the second time is free
KEEP_RESULTS_S = 3600  # result CSVs older than this are deleted, so a long-running Space does not fill its disk
TESTS = {"paired bootstrap": "bs", "approximate randomization": "ar", "none (intervals only)": None}
_RESULTS = Path(tempfile.mkdtemp(prefix="fastbertscore-results-"))
# Every request's model work runs on this one thread. Gradio hands requests to up to 40 worker threads; when each
# of them ran the encoder, each got its own malloc arena and OpenMP team, and the Space's RSS kept growing.
_MODEL_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbertscore-model")


def on_model_thread(handler):
    """Run ``handler`` on the model thread; any failure is one message (gr.Error). Gradio reads its signature."""

    @functools.wraps(handler)
    def run(*args, **kwargs):
        try:
            return _MODEL_THREAD.submit(handler, *args, **kwargs).result()
        except gr.Error:
            raise
        except (ValueError, TypeError) as error:  # bad input: the check's own message
            raise gr.Error(_first_line(error)) from None
        except Exception as error:  # anything else still says what went wrong instead of a bare "Error" badge
            logger.exception("%s failed", handler.__name__)
            raise gr.Error(f"{handler.__name__} failed: {type(error).__name__}: {_first_line(error)}") from None

    return run


def _first_line(error: Exception) -> str:
    text = (str(error).strip() or type(error).__name__).splitlines()[0]
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.isalpha() else text  # never "Dtype='float16'"


def _scorer(model, layer, lang, idf_sents, dtype="float32", rescaled=False):
    """The Space's scorer for these boxes (it rescales where the language has a baseline: raw requests read the
    raw numbers of the same result) and a note when rescaled numbers were asked for but cannot be shown."""
    model_id = (model or "").strip() or fb.DEFAULT_MODEL
    settings = fb.Settings(
        model_type=fb.check_hub_model_id(model_id),
        num_layers=space.parse_layer(layer),
        cache_mb=CACHE_MB,
        lang=(lang or "").strip() or None,
        idf=idf_sents is not None,
        idf_sents=idf_sents,
        dtype=dtype or "float32",
    )
    try:
        scorer, note = space.space_scorer(settings)
    except Exception as error:  # unknown ids, model code, devices, no network: the engine's message, one line
        logger.info("loading %s failed", model_id, exc_info=True)
        message = _first_line(error)  # the engine's own message names the model; others get its id in front
        raise gr.Error(
            message if model_id in message else f"Could not load the model {model_id!r}: {message}"
        ) from None
    if not rescaled:
        return scorer, ""
    return scorer, note or ("" if settings.lang else "Only raw scores: rescaling needs a language (e.g. en).")


def _colours(cut_at=None):
    """The missed-words panel's colours: missed words red, a text's part past the model's window grey."""
    return {"missing": "red", **({space.past_cut_label(cut_at): "gray"} if cut_at else {})}


def _table(header_rows, **options):
    return gr.Dataframe(value=header_rows[1], headers=header_rows[0], **options)


@on_model_thread
def score_pair(candidate, references, model, layer, lang, idf, do_rescale, dtype="float32"):
    candidate, refs = (
        space.check_text(candidate, "The candidate", MAX_CHARS),
        space.parse_references(references, MAX_CHARS),
    )
    scorer, note = _scorer(model, layer, lang, refs if idf else None, dtype, rescaled=do_rescale)
    rescaled = bool(do_rescale) and scorer.rescale_with_baseline
    result = space.of_kind(scorer.score_result([candidate], [refs]), scorer, rescaled)
    best = refs[0] if result.best_reference is None else refs[int(result.best_reference[2][0])]
    # Against the reference that counted for F; similarities of the kind shown.
    tokens = fb.explain(candidate, best, scorer=scorer, level="token", rescaled=rescaled)
    kind = space.kind(rescaled)
    words, missed = space.reference_words(tokens, rescaled)
    note = " ".join(filter(None, [note, space.cut_note(scorer, {"candidate": candidate, "reference": best})]))
    cut_at = scorer.token_limit if space.is_cut(scorer, best) else None
    segments: list[tuple[str, str | float | None]] = [*space.highlight(best, words, missed, cut_at)]
    return (
        _table(space.pair_table(result)),
        gr.Textbox(result.hash, label=f"Hash code ({kind} scores)"),
        space.counted_note(result, len(refs)),
        note,
        fb.similarity_figure(tokens, kind=kind),
        gr.HighlightedText(segments, color_map=_colours(cut_at)),
        _table(space.matches_table(tokens, rescaled)),
    )


@on_model_thread
def score_file(file, cand_column, ref_columns, model, layer, lang, idf, do_rescale, dtype="float32"):
    if file is None:
        raise gr.Error("Upload a .csv, .tsv or .jsonl file first")
    cands, refs, groups = space.batch_pairs(
        fb.read_rows(file if isinstance(file, str) else file.name),
        cand_column,
        ref_columns,
        max_pairs=MAX_PAIRS,
        max_chars=MAX_CHARS,
    )
    scorer, note = _scorer(model, layer, lang, [r for g in groups for r in g] if idf else None, dtype, do_rescale)
    result = space.of_kind(scorer.score_result(cands, refs), scorer, bool(do_rescale))
    header, rows = space.batch_table(cands, groups, result)
    out = _results_file()
    with out:
        csv.writer(out).writerows([header, *rows])
    summary = space.batch_summary(result, scorer.signature) + (f"  \n{note}" if note else "")
    return (
        _table((header, rows), max_chars=space.SHORT_TEXT, wrap=True, column_widths=space.column_widths(header)),
        out.name,
        summary,
        space.histogram(result.scores[2].tolist(), result.rescaled is not None),
    )


def _lines_of(file) -> tuple[str, list[str]]:
    path = file if isinstance(file, str) else file.name
    try:
        return Path(path).name, fb.read_lines(path)
    except ValueError as error:
        raise ValueError(f"{Path(path).name}: {error}") from None


def _systems_and_references(ref_file, ref_text, system_files, systems_text):
    refs = _lines_of(ref_file)[1] if ref_file is not None else space.parse_lines(ref_text)
    systems = space.gather_systems([_lines_of(file) for file in system_files or []], systems_text)
    space.check_systems(systems, refs, max_systems=MAX_SYSTEMS, max_segments=MAX_PAIRS, max_chars=MAX_CHARS)
    return systems, refs


@on_model_thread
def compare_systems(
    ref_file,
    ref_text,
    system_files,
    systems_text,
    test,
    n_samples,
    seed,
    model,
    layer,
    lang,
    idf,
    do_rescale,
    dtype="float32",
):
    systems, refs = _systems_and_references(ref_file, ref_text, system_files, systems_text)
    scorer, note = _scorer(model, layer, lang, refs if idf else None, dtype, rescaled=do_rescale)
    scorer = space.scorer_of_kind(scorer, bool(do_rescale))
    result = fb.compare(
        systems,
        refs,
        test=TESTS.get(test, "bs"),
        n_samples=int(n_samples) if n_samples else None,
        seed=int(seed),
        scorer=scorer,
    )
    rescaled = scorer.rescale_with_baseline
    summary = space.compare_summary(result, len(refs), rescaled) + (f"  \n{note}" if note else "")
    return _table(space.compare_table(result, rescaled)), summary, space.f1_chart(result, rescaled)


def _results_file():
    for old in _RESULTS.glob("*.csv"):
        if old.stat().st_mtime < time.time() - KEEP_RESULTS_S:
            old.unlink(missing_ok=True)
    return tempfile.NamedTemporaryFile("w", suffix=".csv", dir=_RESULTS, delete=False, encoding="utf-8", newline="")


@on_model_thread
def score(
    candidate: str,
    reference: str,
    model: str = fb.DEFAULT_MODEL,
    num_layers: str = "",
    lang: str = "en",
    idf: bool = False,
    dtype: str = "float32",
) -> dict:
    """API endpoint: BERTScore of one candidate against one reference (several references: one per line)."""
    space.check_score_arguments(
        candidate=candidate, reference=reference, model=model, num_layers=num_layers, lang=lang, idf=idf, dtype=dtype
    )
    candidate, refs = (
        space.check_text(candidate, "The candidate", MAX_CHARS),
        space.parse_references(reference, MAX_CHARS),
    )
    scorer, _ = _scorer(model, num_layers, lang, refs if idf else None, dtype)
    return space.score_json(space.of_kind(scorer.score_result([candidate], [refs]), scorer, False))


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
# Tables fit their box (long texts wrap, cut to SHORT_TEXT characters until clicked); the heatmap scrolls.
CSS = """.fit-table table { table-layout: auto; width: 100%; }
#heatmap .matplotlib { display: block; max-height: 900px; overflow: auto; padding-top: 28px; }
#heatmap .matplotlib img { max-width: none; }"""


def _empty_table(header, **options):
    """A table before its first run: its real column names (the default settings'), no rows."""
    return gr.Dataframe(value=[], headers=header, elem_classes="fit-table", **options)


def _clear_then(button, handler, inputs, outputs, api_name):
    """Clear ``outputs`` first (a text box's label too): a failing run leaves no stale results on screen."""
    clear = lambda: [gr.update(value="", label=o.label) if isinstance(o, gr.Textbox) else None for o in outputs]
    button.click(clear, None, outputs, queue=False, api_visibility="private").then(
        handler, inputs, outputs, api_name=api_name
    )


# Gradio's own copies of uploads and results are deleted after an hour as well.
with gr.Blocks(title="fastbertscore", delete_cache=(600, KEEP_RESULTS_S)) as demo:
    gr.Markdown(
        "# BERTScore\nExact to `bert-score` 0.3.13, fast, with rescaling baselines from the Hub. "
        f"The default model (`{fb.DEFAULT_MODEL}`) runs offline; other models by Hub id."
    )
    with gr.Row():
        model = gr.Textbox(fb.DEFAULT_MODEL, label="Model (Hub id)", scale=3, min_width=380, elem_id="model")
        layer = gr.Textbox("", label="Layer (empty: the model's tuned layer)", elem_id="layer")
        lang = gr.Textbox("en", label="Language (for rescaling)")
        dtype = gr.Dropdown(
            ["float32", "auto", "bfloat16"], value="float32", label="Precision (float32: exact)", elem_id="dtype"
        )
        idf = gr.Checkbox(False, label="idf over the references")
        do_rescale = gr.Checkbox(True, label="Also show rescaled scores", elem_id="rescale")
    with gr.Tab("Pair"):
        candidate = gr.Textbox(label="Candidate", lines=3, elem_id="candidate")
        references = gr.Textbox(label="Reference(s), one per line", lines=3, elem_id="references")
        gr.Examples(EXAMPLES, [candidate, references], label="Examples (click one, then Score)", elem_id="examples")
        go = gr.Button("Score", variant="primary", elem_id="score-button")
        pair_outputs = [
            _empty_table(space.PAIR_HEADER, label="Scores (a row each of raw and rescaled)", elem_id="scores"),
            gr.Textbox(label="Hash code", elem_id="hashcode"),
            gr.Markdown(elem_id="counted"),
            gr.Markdown(elem_id="pair-note"),
            gr.Plot(label="Similarity (against the reference that counted for F)", format="png", elem_id="heatmap"),
            gr.HighlightedText(label="Reference: words the candidate missed", color_map=_colours(), elem_id="missing"),
            _empty_table(space.matches_header(True), label="Best matches", elem_id="matches", max_height=400),
        ]
        _clear_then(
            go,
            score_pair,
            [candidate, references, model, layer, lang, idf, do_rescale, dtype],
            pair_outputs,
            "score_pair",
        )
    with gr.Tab("Batch"):
        upload = gr.File(label="CSV, TSV or JSONL", file_types=[".csv", ".tsv", ".jsonl"], elem_id="upload")
        with gr.Row():
            cand_column = gr.Textbox("candidate", label="Candidate column")
            ref_columns = gr.Textbox("reference", label="Reference column(s), comma-separated")
        run = gr.Button("Score file", variant="primary", elem_id="score-file")
        batch_outputs = [
            _empty_table(
                space.batch_header(True, False), label="Results (click a text to see all of it)", elem_id="results"
            ),
            gr.File(label="Download results (full texts)", elem_id="download"),
            gr.Markdown(elem_id="summary"),
            gr.Plot(label="F1 histogram", elem_id="histogram"),
        ]
        _clear_then(
            run,
            score_file,
            [upload, cand_column, ref_columns, model, layer, lang, idf, do_rescale, dtype],
            batch_outputs,
            "score_file",
        )
    with gr.Tab("Compare systems"):
        gr.Markdown(
            "Corpus BERTScore of 2–8 systems on the same references, with 95% confidence intervals and a "
            "paired test of each against the first (the baseline), as `sacrebleu --paired-bs` reports BLEU."
        )
        with gr.Row():
            ref_file = gr.File(label="References (.txt, one per line)", file_types=[".txt"], elem_id="compare-refs")
            system_files = gr.File(
                label="System outputs (.txt, one file per system; the first is the baseline)",
                file_count="multiple",
                file_types=[".txt"],
                elem_id="compare-systems",
            )
        with gr.Accordion("…or paste them", open=False, elem_id="paste"):
            ref_text = gr.Textbox(label="References, one per line", lines=4, elem_id="ref-text")
            systems_text = gr.Textbox(
                label=f"Systems: a line '=== name', then its outputs, one per line (blank lines "
                f"separate; an empty output is a line {space.EMPTY_LINE})",
                lines=6,
                elem_id="systems-text",
            )
        with gr.Row():
            test = gr.Dropdown(list(TESTS), value="paired bootstrap", label="Test")
            n_samples = gr.Number(0, label="Resamples / trials (0: the test's default, 1,000 / 10,000)", precision=0)
            seed = gr.Number(12345, label="Seed", precision=0)
        compare_button = gr.Button("Compare", variant="primary", elem_id="compare-button")
        compare_outputs = [
            _empty_table(space.compare_header(True), label="Systems", elem_id="compare-table"),
            gr.Markdown(elem_id="compare-summary"),
            gr.Plot(label="F1 with 95% confidence intervals", elem_id="compare-chart"),
        ]
        _clear_then(
            compare_button,
            compare_systems,
            [
                ref_file,
                ref_text,
                system_files,
                systems_text,
                test,
                n_samples,
                seed,
                model,
                layer,
                lang,
                idf,
                do_rescale,
                dtype,
            ],
            compare_outputs,
            "compare",
        )
    gr.api(score, api_name="score")

demo.queue(default_concurrency_limit=2, max_size=64)

if __name__ == "__main__":
    demo.launch(css=CSS)
