"""``bertscore -c CANDS -r REFS``: score files or strings, with the flags of the ``bert-score`` CLI.

``--use_fast_tokenizer`` is a real opt-in (the reference's is inverted).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from fastbertscore.cli.common import (
    InputError,
    Parser,
    add_common,
    guarded,
    line_name,
    read_texts,
    settings_from,
    stdin_lines,
)

COMMANDS_HELP = """other commands: bertscore pairwise | mbr | compare | correlate | tune-layer | env | show | baseline (each has --help)"""


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = Parser(prog="bertscore", description="Calculate BERTScore.", epilog=COMMANDS_HELP)
    parser.add_argument("-c", "--cand", required=True, help="candidate file (one per line), '-' for stdin, or a string")
    parser.add_argument(
        "-r", "--ref", nargs="+", required=True, help="reference file(s) (several: multi-reference), '-', or string(s)"
    )
    parser.add_argument("-s", "--seg_level", action="store_true", help="also show the score of each pair")
    parser.add_argument("--output", choices=("text", "json", "tsv"), default="text")
    add_common(parser)
    return parser.parse_args(argv)


def _read_inputs(args: argparse.Namespace) -> tuple[list[str], list[str] | list[list[str]], bool]:
    """The candidates, the references, and whether they came from files (else from the command line)."""
    uses_stdin = [args.cand, *args.ref].count("-")
    if uses_stdin > 1:
        raise InputError(
            "'-' (standard input) can be given only once: for --cand or for one --ref, not "
            f"{'both' if args.cand == '-' else 'two --ref'} (it is read once)"
        )
    stdin = stdin_lines() if uses_stdin else None
    cands = read_texts(args.cand, stdin)
    ref_lines = [read_texts(r, stdin) for r in args.ref]
    if cands is None:
        if any(lines is not None for lines in ref_lines):
            raise InputError("--cand is a string but --ref names a file; give both as files or both as strings")
        return [args.cand], [list(args.ref)], False
    files = [lines for lines in ref_lines if lines is not None]
    if len(files) != len(ref_lines):
        bad = args.ref[[lines is None for lines in ref_lines].index(True)]
        raise InputError(f"--cand is a file but reference {bad!r} is not a file")
    for name, lines in zip(args.ref, files, strict=True):
        if len(lines) != len(cands):
            raise InputError(f"reference {name} has {len(lines)} lines but the candidates have {len(cands)}")
    refs = files[0] if len(files) == 1 else [list(group) for group in zip(*files, strict=True)]
    return cands, refs, True


def _run(args: argparse.Namespace) -> int:
    from fastbertscore.front import run
    from fastbertscore.validate import check_pairs

    cands, refs, from_files = _read_inputs(args)
    settings = settings_from(args, "bertscore")
    pairs = check_pairs(cands, refs)
    if from_files:  # a warning names the file and the line
        pairs = replace(
            pairs, names=lambda side, i, k: line_name(args.cand if side == "cands" else args.ref[k or 0], i)
        )
    result = run(pairs, settings, shared=False, verbose=args.verbose or len(cands) >= 1000)
    (P, R, F), hashcode = result.scores, result.hash
    mean = [float(x.mean()) for x in (P, R, F)]
    if args.output == "json":
        out = {"hash": hashcode, "P": mean[0], "R": mean[1], "F1": mean[2]}
        if args.seg_level:
            out["pairs"] = [{"P": float(p), "R": float(r), "F1": float(f)} for p, r, f in zip(P, R, F, strict=True)]
        print(json.dumps(out))
    elif args.output == "tsv":
        print(f"# {hashcode}\nP\tR\tF1")
        rows = zip(P, R, F, strict=True) if args.seg_level else [mean]
        for p, r, f in rows:
            print(f"{float(p):.6f}\t{float(r):.6f}\t{float(f):.6f}")
    else:
        print(f"{hashcode} P: {mean[0]:.6f} R: {mean[1]:.6f} F1: {mean[2]:.6f}")
        if args.seg_level:
            for p, r, f in zip(P, R, F, strict=True):
                print(f"{float(p):.6f}\t{float(r):.6f}\t{float(f):.6f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded("bertscore", _run, _parse(sys.argv[1:] if argv is None else argv))
