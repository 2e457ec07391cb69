"""The scoring pipeline, one step per module, data flowing one way:

text → :mod:`.tokens` → :mod:`.weights` (idf) → :mod:`.embed` (with :mod:`.windows` for long inputs) →
:mod:`.match` (greedy matching, P/R/F) ; :mod:`.engine` runs those steps over many pairs in bounded memory.
:mod:`.loading` finds and loads models and tokenizers, :mod:`.encoder` cuts encoders and knows their limits,
:mod:`.defaults` picks the default model and layer (with the user's :mod:`.layer_registry`), :mod:`.heap` gives
freed memory back to the OS. Nothing here imports the scorer, the baselines or an adapter.
"""
