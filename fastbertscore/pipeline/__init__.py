"""The scoring pipeline, one step per module, data flowing one way:

text → :mod:`.prepare` (distinct texts, :mod:`.tokens`, :mod:`.weights`) → :meth:`.embedder.Embedder.embed` (the
encoder run of :mod:`.embed`, with :mod:`.windows` for long inputs) → :mod:`.match` (greedy matching, P/R/F).
:mod:`.plan` schedules a call and :mod:`.engine` carries it out pair by pair, :mod:`.allpairs` all-vs-all, both
within a :mod:`.budget` and cut into batches by :mod:`.batching`. Nothing here imports the scorer, the baselines or
an adapter.
"""
