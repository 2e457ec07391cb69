"""Every docstring example in the package runs, on the embedded model, and prints what its docstring says."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import fastbertscore

MODULES = [name for _, name, _ in pkgutil.walk_packages(fastbertscore.__path__, "fastbertscore.")] + ["fastbertscore"]
WITH_EXAMPLES = sorted(
    name for name in MODULES if ">>>" in Path(importlib.util.find_spec(name).origin).read_text(encoding="utf-8")
)


def test_the_examples_are_found():
    assert {"fastbertscore.scorer", "fastbertscore.compute", "fastbertscore.explanations.explanation"} <= set(
        WITH_EXAMPLES
    )


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)  # a failing example is printed with what it gave and what was expected
    results = runner.summarize(verbose=False)
    assert results.attempted > 0 and results.failed == 0, (
        f"{results.failed} of {results.attempted} examples failed in {name}"
    )
