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


def _unknown_command(word: str) -> int:
    """Scoring takes flags only, so a first word that is no command is a typo: say so, with the nearest name."""
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1)
    hint = f"did you mean 'bertscore {close[0]}'?" if close else f"commands: {', '.join(COMMANDS)}"
    print(
        f"bertscore: error: unknown command {word!r}: {hint} (scoring takes flags: bertscore -c CANDS -r REFS)",
        file=sys.stderr,
    )
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else None
    if command is not None and command not in COMMANDS and not command.startswith("-"):
        return _unknown_command(command)
    if command not in COMMANDS:
        from fastbertscore.cli.score import main as score_main

        return score_main(argv)
    module, _, function = COMMANDS[command].partition(":")
    return getattr(importlib.import_module(f"fastbertscore.cli.{module}"), function or "main")(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
