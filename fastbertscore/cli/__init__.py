"""The command-line adapters. ``bertscore`` (:mod:`.main`) dispatches to one module per command; the console
scripts ``bertscore-show`` and ``bertscore-baseline`` are :mod:`.show` and :mod:`.baseline`. Every command builds
its flags from :class:`fastbertscore.Settings` through :mod:`.common`, and calls only the engine's public API."""
