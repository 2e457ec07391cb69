"""``python -m fastbertscore.cli.raydata PAIRS --out SCORES``: score a file of pairs on Ray Data, one model per
actor (:func:`~fastbertscore.scale.raydata.score_with_ray`; ``pip install 'fastbertscore[ray]'``)."""

from __future__ import annotations

import sys

from fastbertscore.cli.common import Parser, add_arguments, check_outputs, in_flags, settings_from
from fastbertscore.files import pairs_from_rows, read_rows, write_scores
from fastbertscore.scale.raydata import score_with_ray
from fastbertscore.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m fastbertscore.cli.raydata", description="Score a file of pairs on Ray.")
    parser.add_argument("pairs", help="a .csv, .tsv or .jsonl file of pairs")
    parser.add_argument("--candidate-column", default="candidate")
    parser.add_argument("--reference-column", nargs="+", default=["reference"])
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start or join a local one)")
    parser.add_argument("--concurrency", type=int, help="actors (default: the number of GPUs, or 1)")
    parser.add_argument("--num-gpus", type=float, help="GPUs per actor (default: 1 when the cluster has GPUs)")
    parser.add_argument("--num-cpus", type=float, help="CPUs per actor")
    parser.add_argument("--batch-size", dest="ray_batch_size", type=int, default=256, help="pairs per Ray batch")
    parser.add_argument("--out", required=True, help="TSV of P, R, F per pair, in input order")
    add_arguments(parser, exclude=("device", "batch_size"))  # actors take their own device
    args = parser.parse_args(argv)
    try:  # every message names its file or flag: one line, no traceback
        settings = settings_from(args, parser.prog)
        check_outputs(args, {"--out": args.out}, {"pairs": args.pairs})
        cands, refs = pairs_from_rows(
            read_rows(args.pairs),
            args.candidate_column,
            args.reference_column,
            source=args.pairs,
            boxes=("--candidate-column", "--reference-column"),
        )
    except (ValueError, TypeError) as error:
        print(f"error: {in_flags(str(error))}", file=sys.stderr)
        return 2
    import ray

    if not ray.is_initialized():
        ray.init(address=args.address)
    options = {name: value for name, value in vars(args).items() if name in Settings.names() and name != "idf"}
    options["model_type"] = settings.model_type  # the embedded default where no -m or --lang was given
    P, R, F = score_with_ray(
        cands,
        refs,
        idf=settings.idf is True,  # --idf is a flag: True or False, never a mapping
        batch_size=args.ray_batch_size,
        concurrency=args.concurrency,
        num_gpus=args.num_gpus,
        num_cpus=args.num_cpus,
        **options,
    )
    write_scores(args.out, P, R, F)
    return 0


if __name__ == "__main__":
    sys.exit(main())
