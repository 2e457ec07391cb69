"""``bertscore mbr samples.jsonl -o picks.jsonl``: minimum-Bayes-risk selection with BERTScore as the utility."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from fastbertscore.cli.common import Parser, add_common, check_outputs, guarded, json_lines, settings_from
from fastbertscore.files import write_atomic


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = Parser(prog="bertscore mbr", description="Minimum-Bayes-risk selection with BERTScore.")
    parser.add_argument("samples", type=Path, help="JSON lines: one list of sample texts per input")
    parser.add_argument("-o", "--out", required=True, type=Path, help="JSON lines: index, chosen text, utilities")
    parser.add_argument("--references", type=Path, help="JSON lines of pseudo-references, one list per input")
    parser.add_argument("--utility", choices=("f1", "precision", "recall"), default="f1")
    add_common(parser)
    return parser.parse_args(argv)


def _run(args: argparse.Namespace) -> int:
    from fastbertscore.front import run
    from fastbertscore.validate import check_groups, check_mbr

    check_outputs(args, {"-o": args.out}, {"samples": args.samples, "--references": args.references})
    samples = check_groups(json_lines(args.samples, "samples"), "samples")  # before any model work
    references = (
        None if args.references is None else check_groups(json_lines(args.references, "--references"), "references")
    )
    work = check_mbr(samples, references, args.utility)
    verbose = args.verbose or len(samples) >= 100
    result = run(work, settings_from(args, "bertscore mbr"), shared=False, verbose=verbose)
    lines = []
    for group, index, utilities in zip(samples, result.index, result.utilities, strict=True):
        values = [None if math.isnan(u) else u for u in utilities.tolist()]  # a group of one: no utility (null)
        lines.append(json.dumps({"index": index, "chosen": group[index], "utilities": values}) + "\n")
    write_atomic(args.out, "".join(lines))  # a killed run leaves the old file or none, never half of one
    print(f"{result.hash} mbr ({args.utility}): {len(samples)} picks written to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded("bertscore mbr", _run, _parse(sys.argv[1:] if argv is None else argv))
