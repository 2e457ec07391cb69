"""The models the pipeline runs, found and loaded: :mod:`.loading` finds and loads a model and its tokenizer,
:mod:`.encoder` is the loaded encoder (each family's layer stack, the cut at the chosen layer, where long inputs are
cut), :mod:`.defaults` picks the default model of a language and the default layer, with the user's tuned layers in
:mod:`.layer_registry`. Nothing here imports the pipeline, the scorer or an adapter.
"""
