"""The Space's page: Gradio's layout of the endpoints (:mod:`fastbertscore.space.endpoints`) over the handlers.

With the endpoints, the one module of the package that imports Gradio (an optional extra): ``fastbertscore.space``
imports it only when :func:`~fastbertscore.space.build_demo` is called. Building the page loads no model and makes no folder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from fastbertscore.models.defaults import DEFAULT_MODEL
from fastbertscore.space import endpoints, handlers, tables
from fastbertscore.space.allowed import MAX_PARAMETERS
from fastbertscore.space.inputs import BOXES
from fastbertscore.space.limits import (
    DEADLINE_S,
    JOBS_PER_SESSION,
    KEEP_RESULTS_S,
    MAX_CHARS,
    MAX_PAIRS,
    MAX_REFERENCES,
    MAX_REQUEST_BYTES,
    MAX_ROWS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_SYSTEMS,
    MAX_UPLOAD_BYTES,
    WORK_BUDGET,
    megabytes,
)
from fastbertscore.space.systems import EMPTY_LINE
from fastbertscore.space.views import EXAMPLES, OPTION_NAMES, TESTS

# Tables fit their box (long texts wrap, cut to SHORT_TEXT characters until clicked); the heatmap scrolls.
CSS = """.fit-table table { table-layout: auto; width: 100%; }
#heatmap .matplotlib { display: block; max-height: 900px; overflow: auto; padding-top: 28px; }
#heatmap .matplotlib img { max-width: none; }"""


#: The limits every request meets, as the page states them under its title.
LIMITS_NOTE = (
    f"Each request may need at most {WORK_BUDGET:,} tokens of work (counted in tokens of the default model: a token "
    f"of a larger model costs more) and stops after {DEADLINE_S} s of scoring; each visitor has "
    f"{'one request' if JOBS_PER_SESSION == 1 else f'{JOBS_PER_SESSION} requests'} at a time."
)


def _empty_table(header: list[str], **options: Any) -> gr.Dataframe:
    """A table before its first run: its real column names (the default settings'), no rows."""
    return gr.Dataframe(value=[], headers=header, elem_classes="fit-table", **options)


def _clear_then(
    button: gr.Button,
    handler: Callable[..., object],
    inputs: list[gr.components.Component],
    outputs: list[gr.components.Component],
    api_name: str,
) -> None:
    """Clear ``outputs`` first (a text box's label too): a failing run leaves no stale results on screen."""
    clear = lambda: [gr.update(value="", label=o.label) if isinstance(o, gr.Textbox) else None for o in outputs]
    button.click(clear, None, outputs, queue=False, api_visibility="private").then(
        handler, inputs, outputs, api_name=api_name
    )


def _settings_boxes() -> list:
    """The boxes every tab shares, in :data:`~fastbertscore.space.handlers.OPTION_NAMES` order."""
    with gr.Row():
        model = gr.Textbox(
            DEFAULT_MODEL,
            label="Model (Hub id: the default, or one with a published baseline)",
            scale=3,
            min_width=380,
            elem_id="model",
        )
        layer = gr.Textbox("", label="Layer (empty: the model's tuned layer)", elem_id="layer")
        lang = gr.Textbox("en", label="Language (for rescaling)")
        dtype = gr.Dropdown(
            ["float32", "auto", "bfloat16"], value="float32", label="Precision (float32: exact)", elem_id="dtype"
        )
        idf = gr.Checkbox(False, label="idf over the references")
        rescaled = gr.Checkbox(True, label="Also show rescaled scores", elem_id="rescale")
    boxes = {"model": model, "layer": layer, "lang": lang, "idf": idf, "do_rescale": rescaled, "dtype": dtype}
    return [boxes[name] for name in OPTION_NAMES]


def _pair_tab(shared: list) -> None:
    candidate = gr.Textbox(label=f"Candidate (at most {MAX_CHARS:,} characters)", lines=3, elem_id="candidate")
    references = gr.Textbox(
        label=f"Reference(s), one per line (at most {MAX_REFERENCES}; {MAX_CHARS:,} characters in all)",
        lines=3,
        elem_id="references",
    )
    gr.Examples(EXAMPLES, [candidate, references], label="Examples (click one, then Score)", elem_id="examples")
    go = gr.Button("Score", variant="primary", elem_id="score-button")
    outputs = [
        _empty_table(tables.PAIR_HEADER, label="Scores (a row each of raw and rescaled)", elem_id="scores"),
        gr.Textbox(label="Hash code", elem_id="hashcode"),
        gr.Markdown(elem_id="counted"),
        gr.Markdown(elem_id="pair-note"),
        gr.Plot(label="Similarity (against the reference that counted for F)", format="png", elem_id="heatmap"),
        gr.HighlightedText(
            label="Reference: words the candidate missed", color_map=handlers.colours(), elem_id="missing"
        ),
        _empty_table(tables.matches_header(True), label="Best matches", elem_id="matches", max_height=400),
    ]
    _clear_then(go, endpoints.score_pair, [candidate, references, *shared], outputs, "score_pair")


def _batch_tab(shared: list) -> None:
    upload = gr.File(
        label=f"CSV, TSV or JSONL (at most {megabytes(MAX_UPLOAD_BYTES)}, {MAX_ROWS:,} rows and {MAX_PAIRS:,} pairs, "
        "every reference counted)",
        file_types=[".csv", ".tsv", ".jsonl"],
        elem_id="upload",
    )
    with gr.Row():
        cand_column = gr.Textbox("candidate", label=BOXES[0])
        ref_columns = gr.Textbox(
            "reference", label=f"{BOXES[1]}, comma-separated (at most {MAX_REFERENCES} references a row)"
        )
    run = gr.Button("Score file", variant="primary", elem_id="score-file")
    outputs = [
        _empty_table(
            tables.batch_header(True, False), label="Results (click a text to see all of it)", elem_id="results"
        ),
        gr.File(label="Download results (full texts)", elem_id="download"),
        gr.Markdown(elem_id="summary"),
        gr.Plot(label="F1 histogram", elem_id="histogram"),
    ]
    inputs = [upload, cand_column, ref_columns, *shared]
    _clear_then(run, endpoints.score_file, inputs, outputs, "score_file")


def _compare_tab(shared: list) -> None:
    gr.Markdown(
        f"Corpus BERTScore of 2–{MAX_SYSTEMS} systems on the same references, with 95% confidence intervals and a "
        "paired test of each against the first (the baseline), as `sacrebleu --paired-bs` reports BLEU. At most "
        f"{MAX_ROWS:,} segments, {MAX_PAIRS:,} outputs in all (segments × systems), "
        f"{megabytes(MAX_UPLOAD_BYTES)} a file and {megabytes(MAX_REQUEST_BYTES)} in all."
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
            f"separate; an empty output is a line {EMPTY_LINE})",
            lines=6,
            elem_id="systems-text",
        )
    with gr.Row():
        test = gr.Dropdown(list(TESTS), value="paired bootstrap", label="Test")
        n_samples = gr.Number(
            0, label=f"Resamples / trials (0: the test's default, 1,000 / 10,000; at most {MAX_SAMPLES:,})", precision=0
        )
        seed = gr.Number(12345, label=f"Seed (0 to {MAX_SEED:,})", precision=0)
    button = gr.Button("Compare", variant="primary", elem_id="compare-button")
    outputs = [
        _empty_table(tables.compare_header(True), label="Systems", elem_id="compare-table"),
        gr.Markdown(elem_id="compare-summary"),
        gr.Plot(label="F1 with 95% confidence intervals", elem_id="compare-chart"),
    ]
    inputs = [ref_file, ref_text, system_files, systems_text, test, n_samples, seed, *shared]
    _clear_then(button, endpoints.compare, inputs, outputs, "compare")


def build_demo() -> gr.Blocks:
    """The Space's page: the shared settings boxes, the Pair, Batch and Compare systems tabs, and the ``score``
    endpoint; queued, two requests at a time."""
    # Gradio's own copies of uploads and results are deleted after an hour as well.
    with gr.Blocks(title="fastbertscore", delete_cache=(600, KEEP_RESULTS_S)) as demo:
        gr.Markdown(
            "# BERTScore\nExact to `bert-score` 0.3.13, fast, with rescaling baselines from the Hub. "
            f"The default model (`{DEFAULT_MODEL}`) runs offline; the models with a published rescaling baseline "
            f"of at most {MAX_PARAMETERS // 1_000_000:,} million parameters (such as `roberta-large`) by Hub id.\n\n"
            + LIMITS_NOTE
        )
        shared = _settings_boxes()
        with gr.Tab("Pair"):
            _pair_tab(shared)
        with gr.Tab("Batch"):
            _batch_tab(shared)
        with gr.Tab("Compare systems"):
            _compare_tab(shared)
        gr.api(endpoints.score_api, api_name="score")
    demo.queue(default_concurrency_limit=2, max_size=64)
    return demo


def launch(demo: gr.Blocks, **options: Any) -> None:
    """Serve ``demo`` with the Space's stylesheet and upload limit (``options``: more of ``demo.launch``'s
    arguments)."""
    demo.launch(css=CSS, max_file_size=MAX_UPLOAD_BYTES, **options)
