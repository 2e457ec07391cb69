"""Human ratings to correlate with: candidate, reference and score per row, with optional group, system and
segment columns."""

from __future__ import annotations

import math
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


def read_judgments(
    path,
    *,
    cand="candidate",
    ref="reference",
    human="human",
    group=("year", "lp"),
    system="system",
    segment="seg_id",
    limit: int | None = None,
) -> Judgments:
    """Read a CSV, TSV or JSON Lines file (by extension) of ratings. Group, system and segment columns are optional.

    Raises:
        ValueError: a required column is missing (the message lists the file's columns) or a human score is
            not a number (the message names the row).
    """
    path = Path(path)
    rows = read_rows(path)[:limit]
    columns = list(rows[0]) if rows else []
    for name in (cand, ref, human):
        if name not in columns:
            raise ValueError(f"{path.name}: column {name!r} not found; the file has: {', '.join(map(str, columns))}")
    group = [g for g in group if g in columns]
    scores = []
    for i, row in enumerate(rows, start=2):
        try:
            value = float(row[human])
        except (TypeError, ValueError):
            raise ValueError(f"{path.name} line {i}: human score {row[human]!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"{path.name} line {i}: human score {row[human]!r} is not finite")
        scores.append(value)
    key = lambda row, names: " ".join(row[n] for n in names) if names else "all"
    return Judgments(
        [r[cand] for r in rows],
        [r[ref] for r in rows],
        np.array(scores),
        [key(r, group) for r in rows],
        [r.get(system, "") if system in columns else "" for r in rows],
        [r.get(segment, str(i)) if segment in columns else str(i) for i, r in enumerate(rows)],
    )
