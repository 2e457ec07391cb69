"""Human ratings to correlate with: candidate, reference and score per row, with optional group, system and
segment columns."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastbertscore.files import read_rows

POOLED = "pooled"  # the group name of all rows together


@dataclass
class Judgments:
    cands: list[str]
    refs: list[str]
    human: np.ndarray
    groups: list[str]  # e.g. "2022 cs-en"
    systems: list[str]
    segments: list[str]  # segment key inside a group, for the bootstrap


#: The columns rows are grouped by when no ``group`` is given, where the file has them: WMT's year and language pair.
DEFAULT_GROUP = ("year", "lp")


def read_judgments(
    path: str | os.PathLike[str],
    *,
    cand: str = "candidate",
    ref: str = "reference",
    human: str = "human",
    group: Sequence[str] | None = None,
    system: str = "system",
    segment: str = "seg_id",
    limit: int | None = None,
) -> Judgments:
    """Read a CSV, TSV or JSON Lines file (by extension) of ratings. System and segment columns are optional; the rows
    are grouped by the ``group`` columns, each of which must be in the file (None: by :data:`DEFAULT_GROUP`, those of
    its columns the file has).

    Raises:
        ValueError: a required column is missing (the message lists the file's columns), a human score is
            not a number, a candidate or reference is not text, or a group, system or segment is neither text nor
            a number (the message names the row).
    """
    path = Path(path)
    rows = read_rows(path)[:limit]
    columns = list(rows[0]) if rows else []
    for name in (cand, ref, human):
        if name not in columns:
            raise ValueError(f"{path.name}: column {name!r} not found; the file has: {', '.join(map(str, columns))}")
    if group is None:
        group = [g for g in DEFAULT_GROUP if g in columns]
    elif missing := [g for g in group if g not in columns]:
        has = ", ".join(map(str, columns))
        raise ValueError(f"{path.name}: group column {missing[0]!r} not found; the file has: {has}")
    scores = []
    for i, row in enumerate(rows, start=2):
        value = _number(row[human], f"{path.name} line {i}")
        if not math.isfinite(value):
            raise ValueError(f"{path.name} line {i}: human score {row[human]!r} is not finite")
        scores.append(value)
    # Each cell as the line it came from (the header is line 1), checked: texts are text; group, system and segment
    # are labels, which JSON Lines may write as numbers (a year, a segment id).
    lines = [(f"{path.name} line {i}", row) for i, row in enumerate(rows, start=2)]
    return Judgments(
        [_text(r, cand, line) for line, r in lines],
        [_text(r, ref, line) for line, r in lines],
        np.array(scores),
        [" ".join(_label(r.get(g), g, line) for g in group) if group else "all" for line, r in lines],
        [_label(r.get(system, ""), system, line) if system in columns else "" for line, r in lines],
        [
            _label(r.get(segment, str(i)), segment, line) if segment in columns else str(i)
            for i, (line, r) in enumerate(lines)
        ],
    )


def _number(value: object, line: str) -> float:
    """A human score as a float; anything else is a ``ValueError`` naming ``line``."""
    if isinstance(value, (str, int, float)):
        try:
            return float(value)
        except ValueError:
            pass
    raise ValueError(f"{line}: human score {value!r} is not a number")


def _text(row: Mapping[str, object], column: str, line: str) -> str:
    value = row[column]
    if isinstance(value, str):
        return value
    raise ValueError(f"{line}: {column!r} is {value!r:.40}, not text")


def _label(value: object, column: str, line: str) -> str:
    """A group, system or segment cell as a label: text, or a number as JSON Lines writes one."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{line}: {column!r} is {value!r:.40}, not a label (text or a number)")
