"""``bertscore``: one entry point. ``bertscore -c CANDS -r REFS`` scores (as the ``bert-score`` CLI does); a first
word names another command."""

from __future__ import annotations

import importlib
import sys

#: command → module under ``fastbertscore.cli`` (imported only when used) and, after a colon, the function that
#: takes the arguments after the command; ``main`` when none is named.
COMMANDS = {
    "pairwise": "pairwise",
    "mbr": "mbr",
    "compare": "compare",
    "correlate": "correlate",
    "tune-layer": "correlate:tune_layer",
    "env": "env",
    "show": "show",
    "baseline": "baseline",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else None
    if command not in COMMANDS:
        from fastbertscore.cli.score import main as score_main

        return score_main(argv)
    module, _, function = COMMANDS[command].partition(":")
    return getattr(importlib.import_module(f"fastbertscore.cli.{module}"), function or "main")(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
