"""Real WMT system outputs grouped by system, for the tests that compare systems."""

from __future__ import annotations

import csv

from paths import RATINGS


def wmt_systems(path=RATINGS, n_systems: int | None = 4):
    """Outputs of the first ``n_systems`` systems of ``path`` on the segments every one of them has, and the
    references (default: WMT21 is-en in tests/data)."""
    with open(path, encoding="utf-8", newline="") as f:
        return wmt_systems_of(list(csv.DictReader(f, delimiter="\t")), n_systems)


def wmt_systems_of(rows, n_systems: int | None = None):
    """Outputs by system, on the segments every chosen system has, and their references."""
    names = list(dict.fromkeys(r["system"] for r in rows))[:n_systems]
    by = {(r["system"], r["seg_id"]): r for r in rows}
    segments = [s for s in dict.fromkeys(r["seg_id"] for r in rows) if all((n, s) in by for n in names)]
    return {n: [by[n, s]["candidate"] for s in segments] for n in names}, [
        by[names[0], s]["reference"] for s in segments
    ]
