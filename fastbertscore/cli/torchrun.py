"""``torchrun -m fastbertscore.cli.torchrun``: score files of pairs with torch.distributed, each rank a shard
(:func:`~fastbertscore.scale.distributed.score_distributed`); rank 0 writes the scores.

    torchrun --nproc_per_node 4 -m fastbertscore.cli.torchrun -c cands.txt -r refs.txt -m MODEL --out scores.tsv
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

from fastbertscore.cli.common import Parser, add_arguments, check_outputs, from_arguments
from fastbertscore.files import read_lines, write_scores
from fastbertscore.scale.distributed import score_distributed


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        prog="torchrun -m fastbertscore.cli.torchrun", description="Score files of pairs with torch.distributed."
    )
    parser.add_argument("-c", "--cand", required=True, help="candidate file, one per line")
    parser.add_argument("-r", "--ref", required=True, help="reference file, one per line")
    parser.add_argument("--out", required=True, help="TSV of P, R, F per pair, written by rank 0")
    add_arguments(parser, exclude=("device",))  # each rank takes the GPU of its LOCAL_RANK
    args = parser.parse_args(argv)
    try:
        check_outputs(args, {"--out": args.out}, {"-c": args.cand, "-r": args.ref})
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    try:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        device = f"cuda:{local % torch.cuda.device_count()}" if cuda else "cpu"
        cands, refs = read_lines(args.cand), read_lines(args.ref)
        out = score_distributed(cands, refs, to="rank0", settings=from_arguments(args, device=device))
        if out is not None:
            write_scores(args.out, *out)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
