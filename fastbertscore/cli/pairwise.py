"""``bertscore pairwise -a A [-r B] -o matrix.tsv|.npy``: the all-vs-all BERTScore matrix of two lists of texts."""

from __future__ import annotations

import argparse
import io
import itertools
import sys
from pathlib import Path

from fastbertscore.cli.common import (
    InputError,
    Parser,
    TypedFlag,
    add_common,
    check_outputs,
    file_lines,
    flag_of,
    guarded,
    settings_from,
)
from fastbertscore.files import write_atomic


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = Parser(prog="bertscore pairwise", description="All-vs-all BERTScore matrix.")
    parser.add_argument(
        "-a", required=True, type=Path, metavar="CANDS", help="candidate texts, one per line (the matrix's rows)"
    )
    parser.add_argument(
        "-r",
        "--ref",
        dest="b",
        type=Path,
        metavar="REFS",
        help="reference texts, one per line (columns; default: the same as -a)",
    )
    parser.add_argument(
        "-o", "--out", required=True, type=Path, action=TypedFlag, help="matrix file: .tsv (rows of numbers) or .npy"
    )
    parser.add_argument("--score", choices=("f1", "precision", "recall"), default="f1", help="which matrix to write")
    add_common(parser)
    _refuse_a_file_for_b(argv)
    return parser.parse_args(argv)


def _refuse_a_file_for_b(argv: list[str]) -> None:
    """``-b`` was this command's reference file; it is the batch size now, as in every other command."""
    for flag, value in itertools.pairwise(argv):
        if flag == "-b" and not value.isdigit():
            print(
                f"bertscore pairwise: error: -b {value}: -b is the batch size, as in every command; give the "
                "reference texts with -r/--ref",
                file=sys.stderr,
            )
            raise SystemExit(2)


def _run(args: argparse.Namespace) -> int:
    from fastbertscore.front import run
    from fastbertscore.validate import check_matrix_texts

    if args.out.suffix.lower() not in (".tsv", ".npy"):
        raise InputError(f"{flag_of(args, 'out', '-o')} {args.out}: the matrix file must end in .tsv or .npy")
    check_outputs(args, {flag_of(args, "out", "-o"): args.out}, {"-a": args.a, "-r": args.b})
    texts_a = file_lines(args.a, "-a")
    texts_b = None if args.b is None else file_lines(args.b, "-r")
    work = check_matrix_texts(texts_a, texts_b)
    verbose = args.verbose or len(texts_a) >= 200
    result = run(work, settings_from(args, "bertscore pairwise"), shared=False, verbose=verbose)
    P, R, F = result.scores
    matrix = {"precision": P, "recall": R, "f1": F}[args.score]
    if args.out.suffix.lower() == ".npy":
        import numpy as np

        buffer = io.BytesIO()
        np.save(buffer, matrix.numpy())
        write_atomic(args.out, buffer.getvalue())  # a killed run leaves the old file or none, never half of one
    else:
        write_atomic(args.out, "".join("\t".join(f"{x:.6f}" for x in row) + "\n" for row in matrix.tolist()))
    print(f"{result.hash} {args.score}: {tuple(matrix.shape)} matrix written to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded("bertscore pairwise", _run, _parse(sys.argv[1:] if argv is None else argv))
