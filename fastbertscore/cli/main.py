"""``bertscore``: one entry point. ``bertscore -c CANDS -r REFS`` scores (as the ``bert-score`` CLI does); a first
word names another command."""

from __future__ import annotations

import importlib
import sys

#: command → module under ``fastbertscore.cli`` with a ``main(argv)``; imported only when used.
COMMANDS = {
    "pairwise": "pairwise",
    "mbr": "mbr",
    "correlate": "correlate",
    "tune-layer": "correlate",
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
    module = importlib.import_module(f"fastbertscore.cli.{COMMANDS[command]}")
    # correlate/tune-layer share one parser that reads the command itself; the others take what follows it.
    return module.main(argv if COMMANDS[command] == "correlate" else argv[1:])


if __name__ == "__main__":
    sys.exit(main())
