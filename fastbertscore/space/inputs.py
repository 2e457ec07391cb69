"""The Space's text boxes, checked before any model work: a message names the box, what it got and the fix."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from fastbertscore.baselines.lookup import SHIPPED_DIRS
from fastbertscore.files import pairs_from_rows, split_lines
from fastbertscore.models.defaults import LANG2MODEL, MBERT_LANGS
from fastbertscore.scorer import BERTScorer
from fastbertscore.space.limits import MAX_CHARS, MAX_PAIRS, MAX_REFERENCES, MAX_ROWS, check_pairs, shown

#: The Batch tab's column boxes, as their labels begin and as messages about a column name them.
BOXES = ("Candidate column", "Reference column(s)")


def check_text(text: object, what: str, max_chars: int = MAX_CHARS) -> str:
    """``text`` if it is a non-blank string of at most ``max_chars`` characters.

    Raises:
        TypeError: neither a string nor ``None`` (an empty box).
        ValueError: empty or too long.
    """
    if text is not None and not isinstance(text, str):
        raise TypeError(f"{what} must be a string; got a {type(text).__name__}")
    if text is None or not text.strip():
        raise ValueError(f"{what} is empty: type some text")
    if len(text) > max_chars:
        raise ValueError(f"{what} has {len(text)} characters; the Space takes at most {max_chars} per text")
    return text


def parse_references(text: object, max_chars: int = MAX_CHARS, max_references: int = MAX_REFERENCES) -> list[str]:
    """The reference box: one reference per non-blank line, at most ``max_references`` of them.

    Example:
        >>> parse_references("A cat sat.\\n\\nA cat was sitting.\\n", 100)
        ['A cat sat.', 'A cat was sitting.']
    """
    refs = [r for r in split_lines(check_text(text, "The reference", max_chars)) if r.strip()]
    if len(refs) > max_references:
        raise ValueError(
            f"The reference box has {len(refs):,} lines; the Space takes at most {max_references} references per "
            "candidate"
        )
    return refs


def parse_layer(layer: object) -> int | None:
    """The layer box: empty means the model's default (a Number box would send 0, the embedding layer).

    Raises:
        ValueError: anything but a whole number of at most :data:`LAYER_DIGITS` digits.
    """
    text = str(layer).strip() if layer is not None else ""
    if not text:
        return None
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"Layer must be a whole number such as 4, or empty for the model's default; got {shown(text)}")
    if len(text) > LAYER_DIGITS:
        raise ValueError(f"Layer {shown(text)} is past the depth of every model the Space serves")
    return int(text)


#: Digits of the layer box: no model the Space serves has 1,000 layers.
LAYER_DIGITS = 3


@functools.cache
def known_langs() -> frozenset[str]:
    """The language codes the language box takes: bert-score's (its default models' and multilingual BERT's) and
    those of the shipped baselines' folders."""
    shipped = {folder.name for root in SHIPPED_DIRS if root.is_dir() for folder in root.iterdir() if folder.is_dir()}
    return frozenset({*LANG2MODEL, *MBERT_LANGS, *shipped})


def check_lang(lang: object) -> str | None:
    """The language box: empty (no rescaling) or a known language code (:func:`known_langs`), lower-cased.

    Raises:
        ValueError: any other text, naming the box (echoed in part: the box may hold megabytes).

    Example:
        >>> check_lang(" EN "), check_lang("")
        ('en', None)
        >>> check_lang("english")
        Traceback (most recent call last):
        ValueError: Language (for rescaling) 'english' is not a language code the Space knows: use an ISO 639 code such as en, de or zh, or leave the box empty for raw scores only
    """
    text = str(lang).strip() if lang is not None else ""
    if not text:
        return None
    if text.lower() not in known_langs():
        raise ValueError(
            f"Language (for rescaling) {shown(text)} is not a language code the Space knows: use an ISO 639 code such "
            "as en, de or zh, or leave the box empty for raw scores only"
        )
    return text.lower()


def candidate_column(box: object) -> str:
    """The Batch tab's candidate-column box, stripped, refused when empty (before any file is read)."""
    name = str(box or "").strip()
    if not name:
        raise ValueError(f"{BOXES[0]} is empty: name the column that holds the candidates")
    return name


def reference_columns(box: str, max_references: int = MAX_REFERENCES) -> list[str]:
    """The Batch tab's comma-separated reference-column box, refused when it lists no column or more than
    ``max_references`` (before any file is read)."""
    names = [c.strip() for c in (box or "").split(",") if c.strip()]
    if not names:
        raise ValueError(f"{BOXES[1]} is empty: name the column that holds the references (several: comma-separated)")
    if len(names) > max_references:
        raise ValueError(
            f"{BOXES[1]} lists {len(names):,} columns; the Space takes at most {max_references} references per row"
        )
    return names


def batch_pairs(
    rows: Sequence[Mapping[str, object]],
    cand_column: str,
    ref_columns: str,
    *,
    max_rows: int = MAX_ROWS,
    max_chars: int = MAX_CHARS,
    max_references: int = MAX_REFERENCES,
    max_pairs: int = MAX_PAIRS,
    file_name: str = "the file",
) -> tuple[list[str], list[str] | list[list[str]], list[list[str]]]:
    """The Batch tab's file rows as ``(candidates, references, groups)``: ``references`` as
    :func:`~fastbertscore.pairs_from_rows` gives them (for scoring), ``groups`` always a list per candidate.
    ``ref_columns`` is the comma-separated box. References are counted (a JSON list in a cell by its items)
    before any is gathered. ``file_name`` is how messages about the upload name it.

    Raises:
        ValueError: more than ``max_rows`` rows, a row of more than ``max_references`` references, more than
            ``max_pairs`` pairs in all, no rows, a missing column or a cell that is not text (each naming the
            column's box), or a text over ``max_chars`` (by row).
    """
    cand_name, names = candidate_column(cand_column), reference_columns(ref_columns, max_references)
    if len(rows) > max_rows:
        raise ValueError(f"{file_name} has {len(rows):,} rows; the Space scores at most {max_rows:,} per batch")
    pairs = 0
    for number, cells in enumerate(rows, start=1):
        count = sum(len(cell) if isinstance(cell := cells.get(name), list) else 1 for name in names)
        if count > max_references:
            raise ValueError(f"Row {number} has {count:,} references; the Space takes at most {max_references} per row")
        pairs += count
    check_pairs(pairs, f"{len(rows):,} rows and their references", max_pairs)
    cands, refs = pairs_from_rows(
        rows, cand_name, names, source=file_name, boxes=BOXES, max_chars=max_chars, taker="the Space"
    )
    return cands, refs, [group if isinstance(group, list) else [group] for group in refs]


def is_cut(scorer: BERTScorer, text: str) -> bool:
    """Whether the scorer cuts ``text`` at the model's window (it is longer than ``scorer.token_limit``)."""
    limit = scorer.token_limit
    return limit is not None and len(scorer.tokenizer(text)["input_ids"]) > limit


def cut_note(scorer: BERTScorer, texts: dict[str, str]) -> str:
    """A sentence naming the texts (``{name: text}``) longer than the model's window, which the scorer cuts there
    as bert-score does (its scores and the heatmap ignore the rest); empty when none is cut."""
    limit = scorer.token_limit
    cut = [name for name, text in texts.items() if is_cut(scorer, text)]
    if limit is None or not cut:
        return ""
    return (
        f"The {' and the '.join(cut)} {'is' if len(cut) == 1 else 'are'} longer than the model's {limit} tokens: "
        "scores and heatmap use the first ones only, as bert-score does."
    )
