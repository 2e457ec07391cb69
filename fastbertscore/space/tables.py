"""The Space's result tables and summaries: scores first, each column saying raw or rescaled, texts last.

A table is ``(header, rows)`` with full texts; the Space shows the first :data:`SHORT_TEXT` characters of a text
cell until it is clicked, and its downloadable CSV holds the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from fastbertscore.explanations.explanation import Explanation, Unit
from fastbertscore.result import ScoreResult, Scores
from fastbertscore.signature import Signature
from fastbertscore.significance import Comparison

#: A table cell: a number, or text.
Cell = str | int | float
#: A table: its header and its rows.
Table = tuple[list[str], list[list[Cell]]]

COLUMNS = ("P", "R", "F1")
DIGITS = 6  # score columns of the Pair and Batch tabs
CORPUS_DIGITS = 4  # corpus scores and intervals of the Compare tab
SHORT_TEXT = 80  # characters of a text shown in a table cell


def kind(rescaled: bool) -> str:
    """The word every label uses for the two kinds of number."""
    return "rescaled" if rescaled else "raw"


def _prf(scores: Scores, index: int) -> list[float]:
    return [round(float(x[index]), DIGITS) for x in scores]


#: The Pair tab's scores table's columns.
PAIR_HEADER = ["scores", *COLUMNS]


def matches_header(rescaled: bool) -> list[str]:
    """The columns of the Pair tab's best-matches table."""
    return ["candidate token", "best reference token", f"similarity ({kind(rescaled)})"]


def batch_header(rescaled: bool, several_references: bool) -> list[str]:
    """The columns of the Batch table: the number, the scores (raw, then rescaled), which reference counted (with
    several), then the texts."""
    header = ["#", *[f"{c} (raw)" for c in COLUMNS]]
    if rescaled:
        header += [f"{c} (rescaled)" for c in COLUMNS]
    if several_references:
        header += [f"best ref for {c}" for c in COLUMNS]
    return header + ["candidate", "reference"]


def compare_header(rescaled: bool) -> list[str]:
    """The columns of the Compare table."""
    header = ["system"]
    for c in COLUMNS:
        header += [f"{c} ({kind(rescaled)})", f"{c} ± 95%"]
    return header + ["p-value"]


def pair_table(result: ScoreResult, index: int = 0) -> Table:
    """P, R and F1 of candidate ``index``: a row of raw scores, then a row of rescaled ones when there are."""
    rows: list[list[Cell]] = [["raw", *_prf(result.raw, index)]]
    if result.rescaled is not None:
        rows.append(["rescaled", *_prf(result.rescaled, index)])
    return list(PAIR_HEADER), rows


def matches_table(explanation: Explanation, rescaled: bool) -> Table:
    """Each candidate token, the reference token it matched best, and their similarity (of the given kind)."""
    ref = explanation.reference_units
    rows: list[list[Cell]] = [
        [u.text, ref[u.match].text if u.match is not None else "(special)", round(u.similarity, 3)]
        for u in explanation.candidate_units
    ]
    return matches_header(rescaled), rows


def batch_table(cands: list[str], groups: list[list[str]], result: ScoreResult) -> Table:
    """One row per pair: its number, the scores (raw, then rescaled), which reference counted (1-based), then the
    texts (several references joined by `` | ``)."""
    header = batch_header(result.rescaled is not None, result.best_reference is not None)
    parts = [torch.stack(result.raw, dim=-1)]
    if result.rescaled is not None:
        parts.append(torch.stack(result.rescaled, dim=-1))
    scores = torch.cat(parts, dim=-1).tolist()
    best = torch.stack(result.best_reference, dim=-1).tolist() if result.best_reference is not None else None
    rows: list[list[Cell]] = []
    for k, (cand, group) in enumerate(zip(cands, groups, strict=True)):
        row: list[Cell] = [k + 1, *[round(x, DIGITS) for x in scores[k]]]
        if best is not None:
            row += [int(i) + 1 for i in best[k]]
        rows.append(row + [cand, " | ".join(group)])
    return header, rows


def _means(scores: Scores, name: str) -> str:
    mean = torch.stack(scores, dim=-1).double().mean(dim=0)
    return f"mean {name} P {mean[0]:.4f} · R {mean[1]:.4f} · F1 {mean[2]:.4f}"


def batch_summary(result: ScoreResult, signature: Signature) -> str:
    """Markdown: the number of pairs, then each kind of mean next to the hash code of that kind."""
    lines = [f"**{len(result.raw[0])} pairs**"]
    raw_hash = signature.raw().hash
    lines.append(f"{_means(result.raw, 'raw')} · `{raw_hash}`")
    if result.rescaled is not None:
        lines.append(f"{_means(result.rescaled, 'rescaled')} · `{signature.hash}`")
    return "  \n".join(lines)


def compare_table(comparison: Comparison, rescaled: bool) -> Table:
    """One row per system (the baseline first): corpus P, R, F1 of the given kind with their 95% half-widths, and
    the p-value against the baseline (``*`` below 0.05). Numbers are text of :data:`CORPUS_DIGITS` decimals, so
    that a perfect system reads ``1.0000 ± 0.0000``, not ``1`` and ``0``."""
    header = compare_header(rescaled)
    rows: list[list[Cell]] = []
    for k, s in enumerate(comparison.systems):
        row: list[Cell] = [f"{s.name} (baseline)" if k == 0 else s.name]
        for x, ci in zip(s.scores, s.intervals, strict=True):
            row += [f"{x:.{CORPUS_DIGITS}f}", f"{ci.half_width:.{CORPUS_DIGITS}f}"]
        rows.append(row + [s.marked_p_value])
    return header, rows


def compare_summary(comparison: Comparison, segments: int, rescaled: bool) -> str:
    """Markdown: what was compared, which kind of score, the signature, and what ``*`` means.

    The signature names a test only when one ran; without one, a sentence says how the intervals were drawn."""
    what = "rescaled with the baseline" if rescaled else "raw (not rescaled)"
    lines = [f"{segments} segments · {len(comparison.systems)} systems · scores {what}"]
    if comparison.test is not None:
        lines += [f"`{comparison.signature}`", "`*`: p < 0.05 against the baseline."]
    else:
        seed = "no seed" if comparison.seed is None else f"seed {comparison.seed}"
        lines += [
            f"`{comparison.scores_signature}`",
            f"No test was run: 95% intervals from {comparison.n_samples:,} bootstrap resamples ({seed}).",
        ]
    return "  \n".join(lines)


def with_notes(text: str, notes: tuple[str, ...], separator: str = "  \n") -> str:
    """``text`` followed by ``notes`` (a scorer's, and the counted work's on texts the tokenizer cannot read), each
    on a line of its own in Markdown (``separator``)."""
    return separator.join(filter(None, [text, *notes]))


def counted_note(result: ScoreResult, n_refs: int) -> str:
    """Markdown: which of several references counted for P, R and F (the best one, separately for each)."""
    if result.best_reference is None:
        return ""
    best = [int(x[0]) for x in result.best_reference]
    if len(set(best)) == 1:
        return f"**Reference {best[0] + 1} of {n_refs}** counted for P, R and F."
    parts = ", ".join(f"{name}: reference {b + 1}" for name, b in zip(COLUMNS, best, strict=True))
    return f"**Best reference of {n_refs}**, separately per score: {parts}."


def past_cut_label(limit: int) -> str:
    """How the missed-words panel labels the part of a text past the model's window."""
    return f"not scored (past the model's {limit} tokens)"


def highlight(
    text: str, units: Sequence[Unit], missing: Sequence[Unit], cut_at: int | None = None
) -> list[tuple[str, str | None]]:
    """The whole ``text`` as segments for a highlighted view, the ``missing`` units labelled "missing" (the gaps
    between units kept as they are). ``cut_at``: the model's token limit where the text was cut there; the rest
    of the text is then one segment labelled :func:`past_cut_label`, starting at a word's end (a word the cut
    fell inside stays whole, with its scored part's label)."""
    spans = {(u.start, u.end) for u in missing}
    segments: list[tuple[str, str | None]] = []
    cursor = 0
    for u in units:
        if u.start > cursor:
            segments.append((text[cursor : u.start], None))
        segments.append((text[u.start : u.end], "missing" if (u.start, u.end) in spans else None))
        cursor = u.end
    if cursor < len(text) and cut_at is not None and segments:
        end = cursor
        while end < len(text) and not text[end].isspace():
            end += 1
        segments[-1] = (segments[-1][0] + text[cursor:end], segments[-1][1])
        cursor = end
        if text[cursor:].strip():
            return [*segments, (text[cursor:], past_cut_label(cut_at))]
    if cursor < len(text):
        segments.append((text[cursor:], None))
    return segments


def column_widths(header: list[str], texts: int = 2) -> list[str]:
    """Widths in percent of the box for a table whose last ``texts`` columns hold texts: narrow number columns,
    the texts sharing the rest, so that the table fits its box and long texts wrap."""
    narrow = [4 if name == "#" else 5 if name.startswith("best ref") else 8 for name in header[: len(header) - texts]]
    rest = (100 - sum(narrow)) / texts if texts else 0
    return [f"{w}%" for w in narrow] + [f"{rest:g}%"] * texts
