"""Run a function on several torch.distributed ranks (gloo, CPU) that meet through a file, and collect what each
returns: no port to pick, so nothing else on the machine can take it first."""

from __future__ import annotations

import json

import torch.multiprocessing as mp


def _entry(rank: int, world: int, folder: str, fn, args) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=world)
    try:
        result = fn(rank, *args)
        with open(f"{folder}/rank{rank}.json", "w") as f:
            json.dump(result, f)
    finally:
        dist.destroy_process_group()


def on_gloo_ranks(fn, folder, *args, world: int = 2) -> list:
    """``fn(rank, *args)`` on ``world`` ranks; each result must be JSON. ``fn`` is a module-level function."""
    mp.spawn(_entry, args=(world, str(folder), fn, args), nprocs=world, join=True)
    return [json.loads((folder / f"rank{rank}.json").read_text()) for rank in range(world)]
