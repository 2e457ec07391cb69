"""Drop-ins for the loops people already run: :mod:`.torchmetrics` (a ``torchmetrics.Metric``, also for Lightning).

Each imports its framework, so import the one you use: ``from fastbertscore.integrations.torchmetrics import
BERTScore``.
"""
