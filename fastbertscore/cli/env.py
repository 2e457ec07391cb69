"""``bertscore env``: what a bug report needs (versions, CPU class, accelerators, what dtype='auto' picks)."""

from __future__ import annotations

import sys

from fastbertscore.cli.common import Parser
from fastbertscore.hardware import describe

DESCRIPTION = "What a bug report needs: versions, CPU class, accelerators, what dtype='auto' picks."


def main(argv: list[str] | None = None) -> int:
    Parser(prog="bertscore env", description=DESCRIPTION).parse_args(sys.argv[1:] if argv is None else argv)
    for key, value in describe().items():
        print(f"{key}: {value}")
    return 0
