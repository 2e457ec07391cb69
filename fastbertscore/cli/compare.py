"""``bertscore compare -r refs.txt A.txt B.txt --paired-bs``: corpus BERTScore of several systems with 95%
confidence intervals and paired significance tests against a baseline, as ``sacrebleu -i A B --paired-bs``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fastbertscore.cli.common import InputError, Parser, add_common, file_lines, guarded, line_name, settings_from


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = Parser(
        prog="bertscore compare",
        description="Compare systems on the same references: BERTScore with 95% CIs and paired significance tests.",
    )
    parser.add_argument("systems", nargs="+", type=Path, help="one file per system, one output per line")
    parser.add_argument(
        "-r",
        "--ref",
        action="append",
        required=True,
        type=Path,
        dest="refs",
        help="reference file, one per line; repeat for several references per segment",
    )
    parser.add_argument(
        "--baseline", help="the system the others are tested against (its file name; default: the first)"
    )
    test = parser.add_mutually_exclusive_group()
    test.add_argument(
        "--paired-bs",
        dest="test",
        action="store_const",
        const="bs",
        help="paired bootstrap resampling (1,000 resamples by default)",
    )
    test.add_argument(
        "--paired-ar",
        dest="test",
        action="store_const",
        const="ar",
        help="paired approximate randomization (10,000 trials by default)",
    )
    parser.add_argument("--n-samples", type=int, help="resamples (--paired-bs, intervals) or trials (--paired-ar)")
    parser.add_argument("--seed", type=int, default=12345, help="random seed (sacrebleu's default: 12345)")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    add_common(parser, taken=("-r",))
    return parser.parse_args(argv)


def _read(args: argparse.Namespace) -> tuple[dict[str, list[str]], list[str] | list[list[str]]]:
    """Systems by file name and the references, every problem named before any model work."""
    ref_files = [file_lines(path, "-r") for path in args.refs]
    for path, lines in zip(args.refs[1:], ref_files[1:], strict=True):
        if len(lines) != len(ref_files[0]):
            raise InputError(f"-r {path} has {len(lines)} lines but -r {args.refs[0]} has {len(ref_files[0])}")
    if not ref_files[0]:
        raise InputError(f"-r {args.refs[0]} is empty")
    references = ref_files[0] if len(ref_files) == 1 else [list(group) for group in zip(*ref_files, strict=True)]
    if args.n_samples is not None and args.n_samples < 1:  # named by its flag, not by compare()'s keyword
        raise InputError(f"--n-samples must be 1 or more, got {args.n_samples}")
    if args.test is not None and len(args.systems) < 2:
        flag = "--paired-bs" if args.test == "bs" else "--paired-ar"
        raise InputError(f"{flag} compares systems with a baseline: give at least two system files")
    systems: dict[str, list[str]] = {}
    for path in args.systems:
        lines = file_lines(path, "system")
        if not lines:
            raise InputError(f"system file {path} is empty")
        if len(lines) != len(ref_files[0]):
            raise InputError(f"system file {path} has {len(lines)} lines but the references have {len(ref_files[0])}")
        if path.name in systems:
            raise InputError(f"two systems are named {path.name}: rename one of the files")
        systems[path.name] = lines
    if args.baseline is not None and Path(args.baseline).name not in systems:
        raise InputError(f"--baseline {args.baseline} is not one of the systems: {', '.join(systems)}")
    return systems, references


def _run(args: argparse.Namespace) -> int:
    from fastbertscore.front import resolve
    from fastbertscore.significance import compare

    systems, references = _read(args)  # before any model work
    files = {path.name: path for path in args.systems}  # messages name a system's file and line, as bertscore does
    settings = settings_from(args, "bertscore compare")
    scorer, _ = resolve(settings, caller="bertscore compare", idf_texts=references, shared=False)
    result = compare(
        systems,
        references,
        baseline=None if args.baseline is None else Path(args.baseline).name,
        test=args.test,
        n_samples=args.n_samples,
        seed=args.seed,
        scorer=scorer,
        label=lambda system, segment, k: line_name(str(files.get(system) or args.refs[k or 0]), segment),
    )
    print({"text": result.table, "json": result.to_json, "markdown": result.to_markdown}[args.format]())
    return 0


def main(argv: list[str] | None = None) -> int:
    return guarded("bertscore compare", _run, _parse(sys.argv[1:] if argv is None else argv))
