"""``bertscore-show`` (also ``bertscore show``): draw the token similarity heatmap of one pair and say what the
candidate missed; takes ``bert-score-show``'s flags."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fastbertscore.cli.common import (
    InputError,
    Parser,
    TypedFlag,
    add_common,
    check_outputs,
    flag_of,
    guarded,
    settings_from,
)
from fastbertscore.files import write_figure


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = Parser(prog="bertscore-show", description="Draw the token similarity heatmap of one pair.")
    parser.add_argument("-c", "--cand", required=True, help="candidate text")
    parser.add_argument("-r", "--ref", required=True, help="reference text")
    parser.add_argument(
        "-f",
        "--file",
        "-o",
        "--out",
        dest="out",
        type=Path,
        default=Path("visualize.png"),
        action=TypedFlag,
        help="image file to write (.png, .svg, .pdf; default visualize.png, as bert-score-show)",
    )
    parser.add_argument(
        "--level", choices=("token", "word", "sentence"), default="word", help="level of the printed explanation"
    )
    parser.add_argument("--threshold", type=float, help="presence threshold (default per level)")
    add_common(parser)
    return parser.parse_args(argv)


def _run(args: argparse.Namespace) -> int:
    from fastbertscore.explanations.explanation import explain
    from fastbertscore.explanations.plot import similarity_figure
    from fastbertscore.front import resolve

    if args.out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError(f"{flag_of(args, 'out', '-f')} {args.out}: the image file must end in .png, .svg or .pdf")
    for flag, text in (("-c/--cand", args.cand), ("-r/--ref", args.ref)):
        if not text.strip():  # nothing to draw (the scores of an empty text are 0 by definition)
            raise InputError(f"{flag} is empty: give a text to draw the heatmap of")
    check_outputs(args, {flag_of(args, "out", "-f"): args.out})  # not over --baseline_path, not a folder
    scorer, _ = resolve(settings_from(args, "bertscore-show"), idf_texts=[args.ref], shared=False)
    tokens = explain(args.cand, args.ref, scorer=scorer, level="token")
    write_figure(args.out, similarity_figure(tokens, kind="rescaled" if scorer.rescale_with_baseline else "raw"))
    summary = explain(args.cand, args.ref, scorer=scorer, level=args.level, presence_threshold=args.threshold)
    print(f"{scorer.hash} P: {summary.precision:.6f} R: {summary.recall:.6f} F1: {summary.f1:.6f}")
    print(f"heatmap: {args.out}")
    print("missing: " + (" | ".join(u.text for u in summary.missing_spans) or "(none)"))
    print("extra: " + (" | ".join(u.text for u in summary.extra_spans) or "(none)"))
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded("bertscore-show", _run, _parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
