"""Scale-out engines on top of :class:`fastbertscore.BERTScorer`: :mod:`.distributed` (torch.distributed; its
command is ``torchrun -m fastbertscore.cli.torchrun``) and :mod:`.raydata` (Ray Data; ``python -m
fastbertscore.cli.raydata``). Each shards pairs, scores each shard with the same settings, and gathers the scores
in input order."""
