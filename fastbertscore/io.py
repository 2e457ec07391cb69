"""Read tables of pairs (CSV, TSV, JSON Lines) for the Space's batch tab and scripts."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def read_rows(path: str | Path) -> list[dict]:
    """Rows of a ``.csv``, ``.tsv`` or ``.jsonl`` file as dicts (header row for CSV/TSV).

    Raises:
        ValueError: unknown extension, unreadable file, or a JSON line that is not an object (named by line).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read {path.name}: {error}") from None
    if suffix in (".csv", ".tsv"):
        return list(csv.DictReader(text.splitlines(), delimiter="\t" if suffix == ".tsv" else ","))
    if suffix in (".jsonl", ".json"):
        rows = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path.name} line {line_no}: not valid JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path.name} line {line_no}: expected a JSON object")
            rows.append(row)
        return rows
    raise ValueError(f"{path.name}: expected a .csv, .tsv or .jsonl file")


def pairs_from_rows(rows: list[dict], cand_column: str, ref_columns: list[str]) -> tuple[list[str], list]:
    """Candidates and references from named columns; several reference columns (or a JSON list) give
    several references per candidate.

    Raises:
        ValueError: a column is missing (the message lists the columns there are), or a cell is not text.
    """
    if not rows:
        raise ValueError("the file has no rows")
    columns = list(rows[0])
    for name in [cand_column, *ref_columns]:
        if name not in columns:
            raise ValueError(f"column {name!r} not found; the file has: {', '.join(map(str, columns))}")
    cands, refs = [], []
    for i, row in enumerate(rows):
        cand = row.get(cand_column)
        if not isinstance(cand, str):
            raise ValueError(f"row {i + 1}: {cand_column!r} is {cand!r}, not text")
        group = []
        for name in ref_columns:
            cell = row.get(name)
            cells = cell if isinstance(cell, list) else [cell]
            if not cells or not all(isinstance(c, str) for c in cells):
                raise ValueError(f"row {i + 1}: {name!r} is {cell!r}, not text")
            group.extend(cells)
        cands.append(cand)
        refs.append(group)
    multi = any(len(group) > 1 for group in refs)
    return cands, (refs if multi else [group[0] for group in refs])


def write_scores(path: str | Path, P, R, F) -> None:
    """A ``P, R, F1`` TSV with one row per pair, six decimals: the output file of the scale-out commands."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("P\tR\tF1\n")
        f.writelines(f"{p:.6f}\t{r:.6f}\t{x:.6f}\n" for p, r, x in zip(P.tolist(), R.tolist(), F.tolist()))
