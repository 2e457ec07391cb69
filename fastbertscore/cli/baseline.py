"""``bertscore-baseline``: import the published baselines, build new ones, push them to the Hub."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from fastbertscore.baselines.build import build
from fastbertscore.baselines.publish import import_bert_score, push
from fastbertscore.baselines.table import BaselineError
from fastbertscore.cli.common import Parser, whole_number


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(
        prog="bertscore-baseline", description="Import the published baselines, build new ones, push them to the Hub."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="copy bert-score's published baselines into a baseline folder")
    imp.add_argument("--source", type=Path, help="a rescale_baseline folder (default: the installed bert-score)")
    imp.add_argument("--out", type=Path, default=Path("baselines"))
    b = sub.add_parser("build", help="compute a baseline from random pairs of a monolingual corpus")
    b.add_argument("--model", required=True)
    b.add_argument("--lang", required=True)
    b.add_argument("--name", help="Hub id to file the baseline under (default: --model; needed for a local folder)")
    b.add_argument("--corpus", type=Path, required=True, help="a text file, one sentence per line")
    b.add_argument("--pairs", type=whole_number(1), default=500_000)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--block", type=whole_number(1), default=2000, help="pairs between checkpoints")
    b.add_argument("--batch-size", type=whole_number(1), default=64)
    b.add_argument("--device")
    b.add_argument("--out", type=Path, default=Path("baselines"))
    p = sub.add_parser(
        "push", help="upload new or changed tables, manifest.json and README.md to a Hub dataset repo (nothing else)"
    )
    p.add_argument("--repo", required=True, help="ORG/NAME of the dataset repo")
    p.add_argument("--root", type=Path, default=Path("baselines"))
    p.add_argument("--revision")
    p.add_argument("--dry-run", action="store_true", help="print what would be uploaded; no network")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        if args.command == "import":
            done = import_bert_score(args.source, args.out)
            print(f"imported {len(done)} baseline files into {args.out}")
        elif args.command == "build":
            if not args.corpus.is_file():
                print(f"bertscore-baseline: error: corpus file {args.corpus} not found", file=sys.stderr)
                return 2
            given = {
                option: getattr(args, option) for option in ("name", "pairs", "seed", "block", "batch_size", "device")
            }
            path = build(args.model, args.lang, args.corpus, args.out, **given)
            print(f"wrote {path}")
        elif args.dry_run:
            files = push(args.root, args.repo, dry_run=True)
            for relpath in files:
                print(f"add {relpath} ({(args.root / relpath).stat().st_size} bytes)")
            print(
                f"dry run: {len(files)} files would be compared with datasets/{args.repo} and the changed ones uploaded "
                "(only <lang>/.../*.tsv, manifest.json and README.md: no hidden file, no link, nothing else)"
            )
        else:
            changed = push(args.root, args.repo, dry_run=False, revision=args.revision)
            print(
                f"pushed {len(changed)} file(s) to datasets/{args.repo}"
                if changed
                else f"datasets/{args.repo} is up to date"
            )
    except (BaselineError, ValueError) as error:
        print(f"bertscore-baseline: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
