"""``bertscore`` (score files or strings) and ``bertscore-show`` (heatmap and what a candidate missed);
``bertscore correlate`` / ``bertscore tune-layer`` are in :mod:`fastbertscore.cli_metaeval`; ``bertscore env``
prints what a bug report needs.

Flags follow the ``bert-score`` CLI; ``--use_fast_tokenizer`` is a real opt-in (the reference's is inverted).
Exit codes: 0 ok, 2 bad input or usage (one line on stderr), 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
from pathlib import Path

from .baselines import BaselineError
from .settings import Settings, add_arguments, from_arguments
from .tables import DEFAULT_MODEL

# A lone word with an extension ("refs.txt", "data/hyp.en") is taken for a file name, so a typo in a path
# is reported instead of being scored as a one-word sentence.
_LOOKS_LIKE_PATH = re.compile(r"^\S*([/\\]\S+|\.[A-Za-z0-9]{1,6})$")


class InputError(ValueError):
    """Bad command-line input; reported in one line with exit code 2."""


def _common(parser: argparse.ArgumentParser, taken: tuple[str, ...] = ()) -> None:
    """The settings' flags (names, defaults, choices and help from :class:`~fastbertscore.Settings`) and -v."""
    add_arguments(parser, taken=taken)
    parser.add_argument("-v", "--verbose", action="store_true", help="progress bars and details")


def _parse_score_args(argv):
    parser = argparse.ArgumentParser(prog="bertscore", description="Calculate BERTScore.")
    parser.add_argument("-c", "--cand", required=True, help="candidate file (one per line), '-' for stdin, or a string")
    parser.add_argument("-r", "--ref", nargs="+", required=True, help="reference file(s) (several: multi-reference), '-', or string(s)")
    parser.add_argument("-s", "--seg_level", action="store_true", help="also show the score of each pair")
    parser.add_argument("--output", choices=("text", "json", "tsv"), default="text")
    _common(parser)
    return parser.parse_args(argv)


def _read_lines(value: str, stdin_text: list[str] | None) -> list[str] | None:
    """Lines of a file (or stdin for '-'), or None when ``value`` is a literal string."""
    if value == "-":
        if stdin_text is None:
            raise InputError("'-' (standard input) can be used for only one of --cand and --ref")
        return stdin_text
    path = Path(value)
    if path.is_file():
        try:
            return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read {value}: {error}") from None
    if _LOOKS_LIKE_PATH.match(value):
        raise InputError(f"file not found: {value} (quote a sentence with spaces to score it as text)")
    return None


def _read_inputs(args) -> tuple[list[str], list]:
    uses_stdin = args.cand == "-" or "-" in args.ref
    stdin = [line.rstrip("\r\n").strip() for line in sys.stdin] if uses_stdin else None
    cands = _read_lines(args.cand, stdin)
    ref_lines = [_read_lines(r, stdin) for r in args.ref]
    if cands is None:
        if any(lines is not None for lines in ref_lines):
            raise InputError("--cand is a string but --ref names a file; give both as files or both as strings")
        return [args.cand], [list(args.ref)]
    if any(lines is None for lines in ref_lines):
        bad = args.ref[[lines is None for lines in ref_lines].index(True)]
        raise InputError(f"--cand is a file but reference {bad!r} is not a file")
    for name, lines in zip(args.ref, ref_lines):
        if len(lines) != len(cands):
            raise InputError(f"reference {name} has {len(lines)} lines but the candidates have {len(cands)}")
    refs = ref_lines[0] if len(ref_lines) == 1 else [list(group) for group in zip(*ref_lines)]
    return cands, refs


def _settings(args, prog: str) -> Settings:
    """The run's settings; without --model or --lang, the embedded default model (said on stderr)."""
    if args.model_type is None and args.lang is None:
        print(f"{prog}: no --model or --lang given: using the embedded default model {DEFAULT_MODEL}", file=sys.stderr)
        return from_arguments(args, model_type=DEFAULT_MODEL)
    return from_arguments(args)


def _run(args) -> int:
    from .scorer import BERTScorer

    cands, refs = _read_inputs(args)
    scorer = BERTScorer.from_settings(_settings(args, "bertscore").idf_over(refs))
    P, R, F = scorer.score(cands, refs, verbose=args.verbose or len(cands) >= 1000)
    hashcode = scorer.hash
    mean = [float(x.mean()) for x in (P, R, F)]
    if args.output == "json":
        out = {"hash": hashcode, "P": mean[0], "R": mean[1], "F1": mean[2]}
        if args.seg_level:
            out["pairs"] = [{"P": float(p), "R": float(r), "F1": float(f)} for p, r, f in zip(P, R, F)]
        print(json.dumps(out))
    elif args.output == "tsv":
        print(f"# {hashcode}\nP\tR\tF1")
        rows = zip(P, R, F) if args.seg_level else [mean]
        for p, r, f in rows:
            print(f"{float(p):.6f}\t{float(r):.6f}\t{float(f):.6f}")
    else:
        print(f"{hashcode} P: {mean[0]:.6f} R: {mean[1]:.6f} F1: {mean[2]:.6f}")
        if args.seg_level:
            for p, r, f in zip(P, R, F):
                print(f"{float(p):.6f}\t{float(r):.6f}\t{float(f):.6f}")
    return 0


def guarded(prog: str, run, args) -> int:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format=f"{prog}: %(message)s")
    try:
        return run(args)
    except (InputError, BaselineError, ValueError, TypeError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - one line, not a stack trace, for anything unexpected
        print(f"{prog}: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["env"]:
        return _env(argv[1:])
    if argv[:1] == ["pairwise"]:
        return guarded("bertscore pairwise", _pairwise, _parse_pairwise_args(argv[1:]))
    if argv[:1] == ["mbr"]:
        return guarded("bertscore mbr", _mbr, _parse_mbr_args(argv[1:]))
    if argv[:1] and argv[0] in ("correlate", "tune-layer"):
        from .cli_metaeval import main as metaeval_main

        return metaeval_main(argv)
    return guarded("bertscore", _run, _parse_score_args(argv))


def _parse_pairwise_args(argv):
    parser = argparse.ArgumentParser(prog="bertscore pairwise", description="All-vs-all BERTScore matrix.")
    parser.add_argument("-a", required=True, type=Path, help="candidate texts, one per line (the matrix's rows)")
    parser.add_argument("-b", type=Path, help="reference texts, one per line (columns; default: the same as -a)")
    parser.add_argument("-o", "--out", required=True, type=Path, help="matrix file: .tsv (rows of numbers) or .npy")
    parser.add_argument("--score", choices=("f1", "precision", "recall"), default="f1", help="which matrix to write")
    _common(parser, taken=("-b",))
    return parser.parse_args(argv)


def _lines(path: Path, flag: str) -> list[str]:
    if not path.is_file():
        raise InputError(f"{flag} {path}: file not found")
    try:
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read {path}: {error}") from None


def _pairwise(args) -> int:
    from .scorer import BERTScorer

    if args.out.suffix.lower() not in (".tsv", ".npy"):
        raise InputError(f"--out must end in .tsv or .npy, got {args.out.name}")
    texts_a = _lines(args.a, "-a")
    texts_b = None if args.b is None else _lines(args.b, "-b")
    settings = _settings(args, "bertscore pairwise").idf_over(texts_a if texts_b is None else texts_b)
    scorer = BERTScorer.from_settings(settings)
    P, R, F = scorer.pairwise(texts_a, texts_b, verbose=args.verbose or len(texts_a) >= 200)
    matrix = {"precision": P, "recall": R, "f1": F}[args.score]
    if args.out.suffix.lower() == ".npy":
        import numpy as np

        np.save(args.out, matrix.numpy())
    else:
        args.out.write_text("".join("\t".join(f"{x:.6f}" for x in row) + "\n" for row in matrix.tolist()), encoding="utf-8")
    print(f"{scorer.hash} {args.score}: {tuple(matrix.shape)} matrix written to {args.out}")
    return 0


def _parse_mbr_args(argv):
    parser = argparse.ArgumentParser(prog="bertscore mbr", description="Minimum-Bayes-risk selection with BERTScore.")
    parser.add_argument("samples", type=Path, help="JSON lines: one list of sample texts per input")
    parser.add_argument("-o", "--out", required=True, type=Path, help="JSON lines: index, chosen text, utilities")
    parser.add_argument("--references", type=Path, help="JSON lines of pseudo-references, one list per input")
    parser.add_argument("--utility", choices=("f1", "precision", "recall"), default="f1")
    _common(parser)
    return parser.parse_args(argv)


def _json_lines(path: Path, flag: str) -> list:
    rows = []
    for number, line in enumerate(_lines(path, flag), start=1):
        if not line:
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as error:
            raise InputError(f"{path} line {number}: not JSON ({error})") from None
    return rows


def _mbr(args) -> int:
    from .scorer import BERTScorer

    from .matrix import check_groups

    samples = check_groups(_json_lines(args.samples, "samples"), "samples")  # before any model work
    references = None if args.references is None else check_groups(_json_lines(args.references, "--references"), "references")
    scorer = BERTScorer.from_settings(_settings(args, "bertscore mbr").idf_over(references or samples))
    result = scorer.mbr(samples, references, utility=args.utility, verbose=args.verbose or len(samples) >= 100)
    with args.out.open("w", encoding="utf-8") as out:
        for group, index, utilities in zip(samples, result.index, result.utilities):
            values = [None if math.isnan(u) else u for u in utilities.tolist()]  # a group of one: no utility (null)
            out.write(json.dumps({"index": index, "chosen": group[index], "utilities": values}) + "\n")
    print(f"{scorer.hash} mbr ({args.utility}): {len(samples)} picks written to {args.out}")
    return 0


def _env(argv: list[str]) -> int:
    """``bertscore env``: what a bug report needs (versions, CPU class, accelerators, what dtype='auto' picks)."""
    argparse.ArgumentParser(prog="bertscore env", description=_env.__doc__).parse_args(argv)
    from .hardware import describe

    for key, value in describe().items():
        print(f"{key}: {value}")
    return 0


def _parse_show_args(argv):
    parser = argparse.ArgumentParser(prog="bertscore-show", description="Draw the token similarity heatmap of one pair.")
    parser.add_argument("-c", "--cand", required=True, help="candidate text")
    parser.add_argument("-r", "--ref", required=True, help="reference text")
    parser.add_argument("-f", "--file", "-o", "--out", dest="out", type=Path, default=Path("visualize.png"),
                        help="image file to write (.png, .svg, .pdf; default visualize.png, as bert-score-show)")
    parser.add_argument("--level", choices=("token", "word", "sentence"), default="word", help="level of the printed explanation")
    parser.add_argument("--threshold", type=float, help="presence threshold (default per level)")
    _common(parser)
    return parser.parse_args(argv)


def _show(args) -> int:
    from .explain import explain
    from .plot import similarity_figure
    from .scorer import BERTScorer

    if args.out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError(f"--out must end in .png, .svg or .pdf, got {args.out.name}")
    scorer = BERTScorer.from_settings(_settings(args, "bertscore-show"))
    tokens = explain(args.cand, args.ref, scorer=scorer, level="token")
    similarity_figure(tokens).savefig(args.out, dpi=120)
    summary = explain(args.cand, args.ref, scorer=scorer, level=args.level, presence_threshold=args.threshold)
    print(f"{scorer.hash} P: {summary.precision:.6f} R: {summary.recall:.6f} F1: {summary.f1:.6f}")
    print(f"heatmap: {args.out}")
    print("missing: " + (" | ".join(u.text for u in summary.missing_spans) or "(none)"))
    print("extra: " + (" | ".join(u.text for u in summary.extra_spans) or "(none)"))
    return 0


def show_main(argv: list[str] | None = None) -> int:
    return guarded("bertscore-show", _show, _parse_show_args(argv))


if __name__ == "__main__":
    sys.exit(main())
