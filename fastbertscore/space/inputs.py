"""The Space's text boxes, checked before any model work: a message names the box, what it got and the fix."""

from __future__ import annotations

from fastbertscore.files import pairs_from_rows, split_lines


def check_text(text, what: str, max_chars: int) -> str:
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


def parse_references(text, max_chars: int) -> list[str]:
    """The reference box: one reference per non-blank line.

    Example:
        >>> parse_references("A cat sat.\\n\\nA cat was sitting.\\n", 100)
        ['A cat sat.', 'A cat was sitting.']
    """
    return [r for r in split_lines(check_text(text, "The reference", max_chars)) if r.strip()]


def parse_layer(layer) -> int | None:
    """The layer box: empty means the model's default (a Number box would send 0, the embedding layer).

    Raises:
        ValueError: anything but a whole number.
    """
    text = str(layer).strip() if layer is not None else ""
    if not text:
        return None
    if not text.isdigit():
        raise ValueError(f"Layer must be a whole number such as 4, or empty for the model's default; got {text!r}")
    return int(text)


def batch_pairs(rows: list[dict], cand_column: str, ref_columns: str, *, max_pairs: int, max_chars: int):
    """The Batch tab's file rows as ``(candidates, references, groups)``: ``references`` as
    :func:`~fastbertscore.pairs_from_rows` gives them (for scoring), ``groups`` always a list per candidate.
    ``ref_columns`` is the comma-separated box.

    Raises:
        ValueError: more than ``max_pairs`` rows, a missing column, or a text over ``max_chars`` (by row).
    """
    if len(rows) > max_pairs:
        raise ValueError(f"The file has {len(rows)} rows; the Space scores at most {max_pairs} per batch")
    cands, refs = pairs_from_rows(rows, cand_column.strip(), [c.strip() for c in ref_columns.split(",") if c.strip()])
    groups = [group if isinstance(group, list) else [group] for group in refs]
    for row, (cand, group) in enumerate(zip(cands, groups, strict=True), start=1):
        longest = max(len(text) for text in (cand, *group))
        if longest > max_chars:
            raise ValueError(f"A text in row {row} has {longest} characters; at most {max_chars}")
    return cands, refs, groups


def is_cut(scorer, text: str) -> bool:
    """Whether the scorer cuts ``text`` at the model's window (it is longer than ``scorer.token_limit``)."""
    limit = scorer.token_limit
    return limit is not None and len(scorer.tokenizer(text)["input_ids"]) > limit


def cut_note(scorer, texts: dict[str, str]) -> str:
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
