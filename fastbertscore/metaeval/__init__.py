"""Agreement with human ratings: :mod:`.judgments` reads them, :mod:`.correlation` correlates every layer of
BERTScore (one pass) and surface metrics with them, :mod:`.system_level` asks whether systems are ordered as
people order them, :mod:`.report` writes tables and plots."""

from fastbertscore.metaeval.correlation import (
    Report,
    Stats,
    bertscore_all_layers,
    correlate,
    meta_evaluate,
    surface_metrics,
)
from fastbertscore.metaeval.judgments import POOLED, Judgments, read_judgments
from fastbertscore.metaeval.report import markdown, plot, table_rows, write_csv
from fastbertscore.metaeval.system_level import (
    SystemAgreement,
    TestSet,
    system_agreement,
    system_level,
    system_markdown,
    test_sets,
)

__all__ = [
    "POOLED",
    "Judgments",
    "Report",
    "Stats",
    "SystemAgreement",
    "TestSet",
    "bertscore_all_layers",
    "correlate",
    "markdown",
    "meta_evaluate",
    "plot",
    "read_judgments",
    "surface_metrics",
    "system_agreement",
    "system_level",
    "system_markdown",
    "table_rows",
    "test_sets",
    "write_csv",
]
