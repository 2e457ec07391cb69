"""Scale-out engines on top of :class:`fastbertscore.BERTScorer`: :mod:`.distributed` (torch.distributed,
``torchrun -m fastbertscore.scale.distributed``) and :mod:`.raydata` (Ray Data, ``python -m
fastbertscore.scale.raydata``). Each shards pairs, scores each shard with the same settings, and gathers the
scores in input order."""
