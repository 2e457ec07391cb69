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
import re
import sys
from pathlib import Path

from .baselines import BaselineError
from .hardware import DTYPE_CHOICES
from .tables import DEFAULT_MODEL

# A lone word with an extension ("refs.txt", "data/hyp.en") is taken for a file name, so a typo in a path
# is reported instead of being scored as a one-word sentence.
_LOOKS_LIKE_PATH = re.compile(r"^\S*([/\\]\S+|\.[A-Za-z0-9]{1,6})$")


class InputError(ValueError):
    """Bad command-line input; reported in one line with exit code 2."""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", help="language code (en, zh, de, ...): picks the default model and baseline")
    parser.add_argument("-m", "--model", help=f"model id or folder (default without --lang: {DEFAULT_MODEL})")
    parser.add_argument("-l", "--num_layers", type=int, help="layer to use (default: the model's tuned layer)")
    parser.add_argument("--idf", action="store_true", help="weight tokens by idf over the references")
    parser.add_argument("--rescale_with_baseline", action="store_true", help="rescale with the baseline of the model")
    parser.add_argument("--baseline_path", help="a LAYER,P,R,F baseline file of your own")
    parser.add_argument("--use_fast_tokenizer", action="store_true", help="ask for the fast tokenizer (opt-in)")
    parser.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: cuda when available)")
    parser.add_argument("--long_inputs", choices=("truncate", "window", "error"), default="truncate",
                        help="texts longer than the model's window: cut (default), score through sliding windows, or fail")
    parser.add_argument("--dtype", choices=DTYPE_CHOICES, default="float32",
                        help="encoder precision: float32 is exact (default); bfloat16/float16 are within ~2e-3 and "
                        "faster only with native hardware support; auto picks the fastest that holds on the device")
    parser.add_argument("-v", "--verbose", action="store_true", help="progress bars and details")


def _parse_score_args(argv):
    parser = argparse.ArgumentParser(prog="bertscore", description="Calculate BERTScore.")
    parser.add_argument("-c", "--cand", required=True, help="candidate file (one per line), '-' for stdin, or a string")
    parser.add_argument("-r", "--ref", nargs="+", required=True, help="reference file(s) (several: multi-reference), '-', or string(s)")
    parser.add_argument("-b", "--batch_size", type=int, default=64)
    parser.add_argument("--nthreads", type=int, default=4, help="accepted for compatibility")
    parser.add_argument("-s", "--seg_level", action="store_true", help="also show the score of each pair")
    parser.add_argument("--output", choices=("text", "json", "tsv"), default="text")
    parser.add_argument("--cache_dir", help="keep sentence embeddings in this folder, reused by later runs")
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


def _model_choice(args) -> str | None:
    if args.model is None and args.lang is None:
        print(f"bertscore: no --model or --lang given: using the embedded default model {DEFAULT_MODEL}", file=sys.stderr)
        return DEFAULT_MODEL
    return args.model


def _run(args) -> int:
    from .scorer import score

    cands, refs = _read_inputs(args)
    (P, R, F), hashcode = score(
        cands, refs, model_type=_model_choice(args), num_layers=args.num_layers, verbose=args.verbose or len(cands) >= 1000,
        idf=args.idf, device=args.device, batch_size=args.batch_size, lang=args.lang, return_hash=True,
        rescale_with_baseline=args.rescale_with_baseline, baseline_path=args.baseline_path,
        use_fast_tokenizer=args.use_fast_tokenizer, long_inputs=args.long_inputs, dtype=args.dtype,
        cache_dir=args.cache_dir,
    )
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
    if argv[:1] and argv[0] in ("correlate", "tune-layer"):
        from .cli_metaeval import main as metaeval_main

        return metaeval_main(argv)
    return guarded("bertscore", _run, _parse_score_args(argv))


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
    parser.add_argument("-o", "--out", type=Path, required=True, help="image file to write (.png, .svg, .pdf)")
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
    scorer = BERTScorer(
        model_type=_model_choice(args), num_layers=args.num_layers, lang=args.lang, device=args.device,
        rescale_with_baseline=args.rescale_with_baseline, baseline_path=args.baseline_path,
        use_fast_tokenizer=args.use_fast_tokenizer, long_inputs=args.long_inputs, dtype=args.dtype,
    )
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
