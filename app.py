"""Gradio Space for fastbertscore: score a pair (with a heatmap and what the candidate missed) or a file.

UI only: scoring, explanations, plots and file reading come from the fastbertscore engine.
Run: ``python app.py`` (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT choose where it listens).
"""

from __future__ import annotations

import csv
import functools
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import torch

import fastbertscore as fb

MAX_PAIRS = 2000  # per batch file
MAX_CHARS = 4000  # per text
COLUMNS = ["P", "R", "F1"]
KEEP_RESULTS_S = 3600  # result CSVs older than this are deleted, so a long-running Space does not fill its disk
_RESULTS = Path(tempfile.mkdtemp(prefix="fastbertscore-results-"))
# Every request's model work runs on this one thread. Gradio hands requests to up to 40 worker threads; when each
# of them ran the encoder, each got its own malloc arena and OpenMP team, and the Space's RSS kept growing.
_MODEL_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbertscore-model")


def on_model_thread(handler):
    """Run ``handler`` on the model thread; its signature and docstring stay (Gradio builds the API from them)."""

    @functools.wraps(handler)
    def run(*args, **kwargs):
        return _MODEL_THREAD.submit(handler, *args, **kwargs).result()

    return run


def _check_text(text: str, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise gr.Error(f"{what} is empty: type some text")
    if len(text) > MAX_CHARS:
        raise gr.Error(f"{what} has {len(text)} characters; the Space takes at most {MAX_CHARS} per text")
    return text


def _references(text: str) -> list[str]:
    """The reference box: one reference per non-blank line."""
    return [r for r in fb.split_lines(_check_text(text, "The reference")) if r.strip()]


def _layer(layer) -> int | None:
    """The layer box: empty means the model's default (a Number box would send 0, the embedding layer)."""
    text = str(layer).strip() if layer is not None else ""
    if not text:
        return None
    if not text.isdigit():
        raise gr.Error(f"Layer must be a whole number such as 4, or empty for the model's default; got {text!r}")
    return int(text)


def _highlight(text: str, units, missing) -> list[tuple[str, str | None]]:
    """The whole text as segments, the missing units labelled (the gaps between units kept as they are)."""
    segments, cursor = [], 0
    for u in units:
        if u.start > cursor:
            segments.append((text[cursor : u.start], None))
        segments.append((text[u.start : u.end], "missing" if (u.start, u.end) in missing else None))
        cursor = u.end
    if cursor < len(text):
        segments.append((text[cursor:], None))
    return segments


def _scorer(model, layer, lang, idf_sents, dtype="float32", rescaled=False):
    """The engine's cached scorer; with ``rescaled`` it rescales, or returns a note saying why it cannot."""
    try:
        settings = dict(
            model_type=fb.check_hub_model_id((model or "").strip() or fb.DEFAULT_MODEL), num_layers=_layer(layer),
            lang=(lang or "").strip() or None, idf=idf_sents is not None, idf_sents=idf_sents, dtype=dtype or "float32",
        )
        if rescaled and settings["lang"] is None:
            return fb.cached_scorer(fb.Settings(**settings)), "Rescaling needs a language (e.g. en)."
        if rescaled:
            try:
                return fb.cached_scorer(fb.Settings(**settings, rescale_with_baseline=True)), ""
            except fb.BaselineError as error:
                return fb.cached_scorer(fb.Settings(**settings)), f"No rescaled scores: {error}"
        return fb.cached_scorer(fb.Settings(**settings)), ""
    except (ValueError, TypeError) as error:  # local paths, model code, unknown ids, devices: the engine's message
        raise gr.Error(str(error)) from None


def _rows(result, index=0):
    """The score table of candidate ``index``: raw, then rescaled when there is one."""
    rows = [["raw", *[round(float(x[index]), 6) for x in result.raw]]]
    if result.rescaled is not None:
        rows.append(["rescaled", *[round(float(x[index]), 6) for x in result.rescaled]])
    return rows


def _which_reference(result, refs) -> str:
    """Which of several references counted for P, R and F (the best one, separately for each)."""
    if result.best_reference is None:
        return ""
    best = [int(x[0]) for x in result.best_reference]
    if len(set(best)) == 1:
        return f"**Reference {best[0] + 1} of {len(refs)}** counted for P, R and F."
    parts = ", ".join(f"{name}: reference {b + 1}" for name, b in zip(COLUMNS, best))
    return f"**Best reference of {len(refs)}**, separately per score: {parts}."


@on_model_thread
def score_pair(candidate, references, model, layer, lang, idf, do_rescale, dtype="float32"):
    candidate = _check_text(candidate, "The candidate")
    refs = _references(references)
    scorer, note = _scorer(model, layer, lang, refs if idf else None, dtype, rescaled=do_rescale)
    result = scorer.score_result([candidate], [refs])
    counted = _which_reference(result, refs)
    best = refs[0] if result.best_reference is None else refs[int(result.best_reference[2][0])]
    tokens = fb.explain(candidate, best, scorer=scorer, level="token")  # against the reference that counted for F
    words = fb.explain(candidate, best, scorer=scorer, level="word")
    missing = {(u.start, u.end) for u in words.missing_spans}
    highlighted = _highlight(best, words.reference_units, missing)
    matches = [
        [u.text, tokens.reference_units[u.match].text if u.match is not None else "(special)", round(u.similarity, 3)]
        for u in tokens.candidate_units
    ]
    return _rows(result), scorer.hash, counted, note, fb.similarity_figure(tokens), highlighted, matches


@on_model_thread
def score_file(file, cand_column, ref_columns, model, layer, lang, idf, do_rescale, dtype="float32"):
    if file is None:
        raise gr.Error("Upload a .csv, .tsv or .jsonl file first")
    try:
        rows = fb.read_rows(file if isinstance(file, str) else file.name)
        if len(rows) > MAX_PAIRS:
            raise gr.Error(f"The file has {len(rows)} rows; the Space scores at most {MAX_PAIRS} per batch")
        cands, refs = fb.pairs_from_rows(rows, cand_column.strip(), [c.strip() for c in ref_columns.split(",") if c.strip()])
    except ValueError as error:
        raise gr.Error(str(error)) from None
    groups = [group if isinstance(group, list) else [group] for group in refs]
    for row, (cand, group) in enumerate(zip(cands, groups), start=1):
        for text in (cand, *group):
            if len(text) > MAX_CHARS:
                raise gr.Error(f"a text in row {row} has {len(text)} characters; at most {MAX_CHARS}")
    flat = [r for group in groups for r in group]
    scorer, note = _scorer(model, layer, lang, flat if idf else None, dtype, rescaled=do_rescale)
    try:
        result = scorer.score_result(cands, refs)
    except (ValueError, TypeError) as error:
        raise gr.Error(str(error)) from None
    raw = torch.stack(result.raw, dim=-1)
    header = ["candidate", "reference", *COLUMNS]
    body = [[c, " | ".join(g), *[round(float(x), 6) for x in s]] for c, g, s in zip(cands, groups, raw)]
    if result.rescaled is not None:
        header += [f"{c} rescaled" for c in COLUMNS]
        body = [row + [round(float(x), 6) for x in s] for row, s in zip(body, torch.stack(result.rescaled, dim=-1))]
    if result.best_reference is not None:
        header += [f"best ref for {c}" for c in COLUMNS]
        body = [row + [int(i) + 1 for i in s] for row, s in zip(body, torch.stack(result.best_reference, dim=-1))]
    out = _results_file()
    with out:
        csv.writer(out).writerows([header, *body])
    mean = raw.mean(dim=0)
    summary = f"**{len(cands)} pairs** · mean P {mean[0]:.4f} · R {mean[1]:.4f} · F1 {mean[2]:.4f}  \n`{scorer.hash}`"
    if note:
        summary += f"  \n{note}"
    return gr.Dataframe(value=body, headers=header), out.name, summary, _histogram(raw[:, 2].tolist())


MAX_SYSTEMS = 8
TESTS = {"paired bootstrap": "bs", "approximate randomization": "ar", "none (intervals only)": None}


def _lines_of(file, what: str) -> list[str]:
    try:
        return fb.read_lines(file if isinstance(file, str) else file.name)
    except ValueError as error:
        raise gr.Error(f"{what}: {error}") from None


def _pasted_systems(text: str) -> dict[str, list[str]]:
    """Systems pasted as blocks, each opened by a line ``=== name``."""
    systems: dict[str, list[str]] = {}
    current = None
    for line in fb.split_lines(text or ""):
        if line.startswith("==="):
            current = line[3:].strip() or f"system {len(systems) + 1}"
            if current in systems:
                raise gr.Error(f"Two pasted systems are named {current!r}")
            systems[current] = []
        elif current is None:
            if line.strip():
                raise gr.Error("Pasted systems start with a line '=== name'")
        else:
            systems[current].append(line)
    return systems


def _systems_and_references(ref_file, ref_text, system_files, systems_text):
    refs = _lines_of(ref_file, "References") if ref_file is not None else [r for r in fb.split_lines(ref_text or "")]
    if not any(r.strip() for r in refs):
        raise gr.Error("Upload a references file or paste the references, one per line")
    systems = {}
    for file in system_files or []:
        name = Path(file if isinstance(file, str) else file.name).name
        if name in systems:
            raise gr.Error(f"Two system files are named {name}")
        systems[name] = _lines_of(file, name)
    for name, lines in _pasted_systems(systems_text).items():
        if name in systems:
            raise gr.Error(f"A file and a pasted system are both named {name}")
        systems[name] = lines
    if not 2 <= len(systems) <= MAX_SYSTEMS:
        raise gr.Error(f"Give 2 to {MAX_SYSTEMS} systems (files or pasted); got {len(systems)}")
    if len(refs) > MAX_PAIRS:
        raise gr.Error(f"The references have {len(refs)} lines; the Space compares at most {MAX_PAIRS} segments")
    for name, lines in systems.items():
        if len(lines) != len(refs):
            raise gr.Error(f"System {name} has {len(lines)} lines but the references have {len(refs)}")
        longest = max([*lines, *refs], key=len)
        if len(longest) > MAX_CHARS:
            raise gr.Error(f"a text of {name} or the references has {len(longest)} characters; at most {MAX_CHARS}")
    return systems, refs


@on_model_thread
def compare_systems(ref_file, ref_text, system_files, systems_text, test, n_samples, seed, model, layer, lang, idf,
                    do_rescale, dtype="float32"):
    systems, refs = _systems_and_references(ref_file, ref_text, system_files, systems_text)
    scorer, note = _scorer(model, layer, lang, refs if idf else None, dtype, rescaled=do_rescale)
    samples = int(n_samples) if n_samples else None
    try:
        result = fb.compare(systems, refs, test=TESTS.get(test, "bs"), n_samples=samples, seed=int(seed), scorer=scorer)
    except (ValueError, TypeError) as error:
        raise gr.Error(str(error)) from None
    header = ["system", "P", "P ± 95%", "R", "R ± 95%", "F1", "F1 ± 95%", "p-value"]
    body = []
    for k, s in enumerate(result.systems):
        row = [f"{s.name} (baseline)" if k == 0 else s.name]
        for x, ci in zip(s.scores, s.intervals):
            row += [round(x, 4), round(ci.half_width, 4)]
        row.append(s.marked_p_value)
        body.append(row)
    summary = f"{len(refs)} segments · {len(systems)} systems  \n`{result.signature}`"
    if result.test is not None:
        summary += "  \n`*`: p < 0.05 against the baseline."
    if note:
        summary += f"  \n{note}"
    return gr.Dataframe(value=body, headers=header), summary, _f1_chart(result)


def _f1_chart(result):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    names = [s.name for s in result.systems]
    ax.errorbar(range(len(names)), [s.scores[2] for s in result.systems],
                yerr=[s.intervals[2].half_width for s in result.systems], fmt="o", capsize=6, color="#3b6ea8")
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylabel("F1 (95% CI)")
    fig.tight_layout()
    return fig


def _results_file():
    cutoff = time.time() - KEEP_RESULTS_S
    for old in _RESULTS.glob("*.csv"):
        if old.stat().st_mtime < cutoff:
            old.unlink(missing_ok=True)
    return tempfile.NamedTemporaryFile("w", suffix=".csv", dir=_RESULTS, delete=False, encoding="utf-8", newline="")


def _histogram(values):
    from matplotlib.figure import (
        Figure,  # not pyplot, which would keep every request's figure alive
    )

    fig = Figure(figsize=(5, 3))
    ax = fig.subplots()
    ax.hist(values, bins=min(30, max(5, len(values) // 5)), color="#3b6ea8")
    ax.set_xlabel("F1")
    ax.set_ylabel("pairs")
    fig.tight_layout()
    return fig


@on_model_thread
def score(candidate: str, reference: str, model: str = fb.DEFAULT_MODEL, num_layers: str = "",
          lang: str = "en", idf: bool = False, dtype: str = "float32") -> dict:
    """API endpoint: BERTScore of one candidate against one reference (several references: one per line)."""
    candidate, refs = _check_text(candidate, "The candidate"), _references(reference)  # before any model load
    scorer, _ = _scorer(model, num_layers, lang, refs if idf else None, dtype)
    result = scorer.score_result([candidate], [refs])
    out = {"precision": float(result.precision[0]), "recall": float(result.recall[0]), "f1": float(result.f1[0])}
    if result.best_reference is not None:
        out["best_reference"] = {name: int(x[0]) for name, x in zip(("precision", "recall", "f1"), result.best_reference)}
    return {**out, "hashcode": scorer.hash}


#: First-run examples: real-looking MT output against human references; the second has two references.
EXAMPLES = [
    ["The government announced on Tuesday new measures to support small businesses.",
     "On Tuesday the government unveiled new measures to help small businesses."],
    ["The meeting was postponed because of the storm.",
     "The meeting was put off because of the storm.\nBecause of the storm, the meeting has been delayed by a week."],
    ["Prices rose by three percent last year, the statistics office said.",
     "According to the statistics office, prices increased by 3% last year."],
]


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
        dtype = gr.Dropdown(["float32", "auto", "bfloat16"], value="float32", label="Precision (float32: exact)",
                            elem_id="dtype")
        idf = gr.Checkbox(False, label="idf over the references")
        do_rescale = gr.Checkbox(True, label="Also show rescaled scores")
    with gr.Tab("Pair"):
        candidate = gr.Textbox(label="Candidate", lines=3, elem_id="candidate")
        references = gr.Textbox(label="Reference(s), one per line", lines=3, elem_id="references")
        gr.Examples(EXAMPLES, [candidate, references], label="Examples (click one, then Score)", elem_id="examples")
        go = gr.Button("Score", variant="primary", elem_id="score-button")
        scores = gr.Dataframe(headers=["", *COLUMNS], label="Scores", elem_id="scores")
        hashcode = gr.Textbox(label="Hash code", elem_id="hashcode")
        counted = gr.Markdown(elem_id="counted")
        note = gr.Markdown()
        heatmap = gr.Plot(label="Token similarity (against the reference that counted for F)")
        missing = gr.HighlightedText(label="Reference: words the candidate missed", color_map={"missing": "red"})
        matches = gr.Dataframe(headers=["candidate token", "best reference token", "similarity"], label="Best matches")
        go.click(score_pair, [candidate, references, model, layer, lang, idf, do_rescale, dtype],
                 [scores, hashcode, counted, note, heatmap, missing, matches], api_name="score_pair")
    with gr.Tab("Batch"):
        upload = gr.File(label="CSV, TSV or JSONL", file_types=[".csv", ".tsv", ".jsonl"], elem_id="upload")
        with gr.Row():
            cand_column = gr.Textbox("candidate", label="Candidate column")
            ref_columns = gr.Textbox("reference", label="Reference column(s), comma-separated")
        run = gr.Button("Score file", variant="primary", elem_id="score-file")
        summary = gr.Markdown(elem_id="summary")
        table = gr.Dataframe(label="Results", elem_id="results")
        download = gr.File(label="Download results")
        histogram = gr.Plot(label="F1 histogram")
        run.click(score_file, [upload, cand_column, ref_columns, model, layer, lang, idf, do_rescale, dtype],
                  [table, download, summary, histogram], api_name="score_file")
    with gr.Tab("Compare systems"):
        gr.Markdown("Corpus BERTScore of 2–8 systems on the same references, with 95% confidence intervals and a "
                    "paired test of each against the first (the baseline), as `sacrebleu --paired-bs` reports BLEU.")
        with gr.Row():
            ref_file = gr.File(label="References (.txt, one per line)", file_types=[".txt"], elem_id="compare-refs")
            system_files = gr.File(label="System outputs (.txt, one file per system; the first is the baseline)",
                                   file_count="multiple", file_types=[".txt"], elem_id="compare-systems")
        with gr.Accordion("…or paste them", open=False):
            ref_text = gr.Textbox(label="References, one per line", lines=4)
            systems_text = gr.Textbox(label="Systems: a line '=== name', then its outputs, one per line", lines=6)
        with gr.Row():
            test = gr.Dropdown(list(TESTS), value="paired bootstrap", label="Test")
            n_samples = gr.Number(0, label="Resamples / trials (0: the test's default, 1,000 / 10,000)", precision=0)
            seed = gr.Number(12345, label="Seed", precision=0)
        compare_button = gr.Button("Compare", variant="primary", elem_id="compare-button")
        compare_summary = gr.Markdown(elem_id="compare-summary")
        compare_table = gr.Dataframe(label="Systems", elem_id="compare-table")
        compare_chart = gr.Plot(label="F1 with 95% confidence intervals")
        compare_button.click(compare_systems, [ref_file, ref_text, system_files, systems_text, test, n_samples, seed,
                                               model, layer, lang, idf, do_rescale, dtype],
                             [compare_table, compare_summary, compare_chart], api_name="compare")
    gr.api(score, api_name="score")

demo.queue(default_concurrency_limit=2, max_size=64)

if __name__ == "__main__":
    demo.launch()
