"""Scale out with torch.distributed (torchrun): each rank scores a contiguous shard of the pairs.

idf stays corpus-level: every rank counts document frequencies over its share of the references into a
vocabulary-sized integer tensor, and one all-reduce of the counts (and of the document count) gives every
rank exactly the single-process idf before any scoring. No sampler pads or repeats items.

    torchrun --nproc_per_node 4 -m fastbertscore.cli.torchrun -c cands.txt -r refs.txt -m MODEL --out scores.tsv

runs :func:`score_distributed` on every rank (the command is :mod:`fastbertscore.cli.torchrun`).
"""

from __future__ import annotations

from typing import Any, Literal, overload

import torch
import torch.distributed as dist

from fastbertscore.front import checked, resolve, run
from fastbertscore.idf import IdfWeights
from fastbertscore.result import Scores
from fastbertscore.settings import Settings
from fastbertscore.validate import Refs, Texts, check_pairs


def shard_bounds(n: int, world: int, rank: int) -> tuple[int, int]:
    """Contiguous ``[start, end)`` of rank ``rank``: sizes differ by at most one, nothing padded or repeated."""
    return rank * n // world, (rank + 1) * n // world


@overload
def score_distributed(
    cands: Texts,
    refs: Refs,
    *,
    to: Literal["all"] = ...,
    group: dist.ProcessGroup | None = ...,
    settings: Settings | None = ...,
    **options: Any,
) -> Scores: ...
@overload
def score_distributed(
    cands: Texts,
    refs: Refs,
    *,
    to: Literal["all", "rank0"],
    group: dist.ProcessGroup | None = ...,
    settings: Settings | None = ...,
    **options: Any,
) -> Scores | None: ...
def score_distributed(
    cands: Texts,
    refs: Refs,
    *,
    to: Literal["all", "rank0"] = "all",
    group: dist.ProcessGroup | None = None,
    settings: Settings | None = None,
    **options: Any,
) -> Scores | None:
    """``(P, R, F)`` of all pairs, in input order, on every rank (``to="all"``) or on rank 0 only (``to="rank0"``;
    other ranks get ``None``). Call it on every rank of an initialised process group with the same inputs.

    ``settings`` (or ``options``, its fields: ``model_type``, ``num_layers``, ``idf``, ``device``, ...) say how
    to score; with ``idf=True`` the document frequencies are counted over all ranks' references.
    """
    if to not in ("all", "rank0"):
        raise ValueError(f"to={to!r} is not one of all, rank0")
    settings = checked("score_distributed()", settings if settings is not None else options)
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    if settings.dtype == "auto":  # measured on each machine: the ranks take the first rank's answer, so all agree
        chosen = [settings.resolved_dtype if rank == 0 else None]
        dist.broadcast_object_list(chosen, src=dist.get_global_rank(group, 0) if group is not None else 0, group=group)
        settings = settings.replace(dtype=chosen[0])
    pairs = check_pairs(cands, refs)
    scorer, _ = resolve(settings, caller="score_distributed()", shared=False)
    if settings.idf is True:  # counted over every rank's references: the value each rank's scorer is built with
        lo, hi = shard_bounds(len(pairs.refs), world, rank)
        counts = scorer.document_frequencies(pairs.refs[lo:hi])
        docs = torch.tensor([hi - lo], dtype=torch.int64)
        dist.all_reduce(counts, group=group)
        dist.all_reduce(docs, group=group)
        scorer = scorer.with_idf(IdfWeights.from_counts(counts, int(docs)))
    n = len(pairs.groups)
    lo, hi = shard_bounds(n, world, rank)
    cand_list, ref_list = list(cands), list(refs)
    local = torch.zeros((0, 3))
    if lo < hi:
        local = torch.stack(run(check_pairs(cand_list[lo:hi], ref_list[lo:hi]), scorer=scorer).scores, dim=-1)
    width = max(shard_bounds(n, world, r)[1] - shard_bounds(n, world, r)[0] for r in range(world))
    padded = torch.zeros((width, 3), dtype=torch.float32)
    padded[: hi - lo] = local
    if to != "all" and rank != 0:
        dist.gather(padded, None, dst=0, group=group)  # only rank 0 receives
        return None
    gathered = [torch.zeros_like(padded) for _ in range(world)]
    if to == "all":
        dist.all_gather(gathered, padded, group=group)
    else:
        dist.gather(padded, gathered, dst=0, group=group)
    parts = [gathered[r][: shard_bounds(n, world, r)[1] - shard_bounds(n, world, r)[0]] for r in range(world)]
    scores = torch.cat(parts)
    return scores[:, 0], scores[:, 1], scores[:, 2]


if __name__ == "__main__":  # the command lives with the others now
    raise SystemExit("the command moved: torchrun -m fastbertscore.cli.torchrun (same flags)")
