"""Rescaling baselines: read ``LAYER,P,R,F`` tables and apply ``(x - b) / (1 - b)``."""

from __future__ import annotations

import csv
import io
import logging
import math
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

_HEADER = ["LAYER", "P", "R", "F"]

#: The largest baseline value accepted. Rescaling is ``(x - b) / (1 - b)``, so ``b`` near 1 blows every score up
#: (0.9999999 made raw 0.5 rescale to -4,194,303); at 0.99 a score moves 100 times its raw distance from ``b``.
#: bert-score's published tables (all 72, every layer) go up to 0.98443 (xlm-roberta-base, layer 12).
MAX_BASELINE = 0.99


class BaselineError(ValueError):
    """A baseline is missing or unreadable; the message says which file and what to do."""


def parse_baseline(text: str, source: str) -> torch.Tensor:
    """Parse a baseline table into ``(L + 1, 3)`` float32 rows of P, R, F (row ``i`` = layer ``i``).

    Raises:
        BaselineError: the header is not ``LAYER,P,R,F``, a row is short or not numeric, or layers are
            missing or out of order.
    """
    rows = list(csv.reader(io.StringIO(text)))
    rows = [row for row in rows if row and any(cell.strip() for cell in row)]
    if not rows:
        raise BaselineError(f"baseline file {source} is empty")
    header = [cell.strip() for cell in rows[0]]
    # Files written by pandas carry an unnamed index column first.
    offset = 1 if header[:1] == [""] else 0
    if header[offset:] != _HEADER:
        raise BaselineError(f"baseline file {source} has header {rows[0]}, expected {','.join(_HEADER)}")
    values: list[list[float]] = []  # one (P, R, F) row per layer
    for line_no, row in enumerate(rows[1:], start=2):
        cells = row[offset:]
        if len(cells) != 4:
            raise BaselineError(f"baseline file {source} line {line_no}: expected 4 columns, got {len(cells)}")
        try:
            layer, *prf = (float(cell) for cell in cells)
        except ValueError:
            raise BaselineError(f"baseline file {source} line {line_no}: not a number in {row}") from None
        # Checked as rescaling will use them, in float32: 0.99999999 is below 1 in float64 but rounds to 1.0 there
        # (and rescaling divides by 1 - b), 1e39 is finite in float64 but infinite in float32.
        stored = torch.tensor(prf, dtype=torch.float64).to(torch.float32).tolist()
        if layer != len(values) or not all(math.isfinite(x) and x < 1 for x in stored):
            raise BaselineError(
                f"baseline file {source} line {line_no}: expected layer {len(values)} with finite values below 1 "
                f"(as float32, what rescaling uses), got {row}"
            )
        _check_plausible(prf, stored, cells, source, line_no)
        values.append(prf)
    if not values:
        raise BaselineError(f"baseline file {source} has a header but no rows")
    return torch.tensor(values, dtype=torch.float64).to(torch.float32)


def _check_plausible(prf: list[float], stored: list[float], cells: list[str], source: str, line_no: int) -> None:
    """Refuse a value above :data:`MAX_BASELINE` (as written: the bound itself is accepted), naming the file, the
    line (its layer) and the column; the message says what raw 0.5 would rescale to (in float32, as rescaling)."""
    for column, written, value, cell in zip(_HEADER[1:], prf, stored, cells[1:], strict=True):
        if written > MAX_BASELINE:
            raise BaselineError(
                f"baseline file {source} line {line_no} (layer {cells[0].strip()}), column {column}: {cell.strip()} "
                f"is above {MAX_BASELINE}, the largest plausible baseline (rescaling divides by 1 - b: raw 0.5 would "
                f"become {(0.5 - value) / (1 - value):.7g}); bert-score's published tables stay below 0.985"
            )


def read_baseline(path: str | Path) -> torch.Tensor:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise BaselineError(f"cannot read baseline file {path}: {error.strerror or error}") from None
    return parse_baseline(text, str(path))


def select_layers(table: torch.Tensor, num_layers: int, depth: int, all_layers: bool, source: str) -> torch.Tensor:
    """The baseline row of ``num_layers`` (``(3,)``), or every row (``(L + 1, 1, 3)``) for all layers (then the table
    needs a row for each of the model's ``depth + 1`` layers). A table of another row count takes a warning: any
    ``LAYER,P,R,F`` table that has the layer serves, as in bert-score, but it may be another model's."""
    rows = f"baseline {source} has layers 0..{table.shape[0] - 1}, but the model has layers 0..{depth}"
    if all_layers and table.shape[0] != depth + 1:
        raise BaselineError(f"{rows}: all_layers=True rescales every layer with its own row")
    if num_layers >= table.shape[0]:
        raise BaselineError(f"baseline {source} has layers 0..{table.shape[0] - 1}; layer {num_layers} is missing")
    if table.shape[0] != depth + 1:
        logger.warning("%s: is it this model's table? Its layer %d row rescales these scores", rows, num_layers)
    return table.unsqueeze(1) if all_layers else table[num_layers]


def rescale(scores: torch.Tensor, baseline: torch.Tensor | float) -> torch.Tensor:
    """``(x - b) / (1 - b)``: over the last dimension (P, R, F) for a ``(3,)`` baseline, per layer for an
    ``(L + 1, 1, 3)`` one (``scores`` ``(L + 1, ..., 3)``: pairs or a matrix of them), or with one value ``b`` for
    anything else (token similarities against the F baseline). The one place scores are rescaled."""
    if isinstance(baseline, torch.Tensor) and baseline.dim() > 1:
        if baseline.shape[0] != scores.shape[0]:
            raise BaselineError(f"baseline has {baseline.shape[0]} layers but the model gives {scores.shape[0]}")
        baseline = baseline.reshape(baseline.shape[0], *([1] * (scores.dim() - 2)), baseline.shape[-1])
    return (scores - baseline) / (1 - baseline)
