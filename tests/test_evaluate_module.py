"""bertscore.py passes huggingface/evaluate's own module test (tests/test_metric_common.py, LocalModuleTest.test_load):
the same procedure, on the real embedded model, with nothing of ours mocked."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import shutil
from unittest.mock import patch

import evaluate
import pytest
from hub import run_python, serve_dataset_repo
from paths import REPO
from tolerances import assert_close, prf_bounds


@pytest.fixture()
def evaluate_checkout(tmp_path, monkeypatch):
    """The layout evaluate's test runs in: metrics/bertscore/bertscore.py under the working folder; and the file
    itself in that folder, as a clone has it at its root, for the examples that load it by its path."""
    module_dir = tmp_path / "metrics" / "bertscore"
    module_dir.mkdir(parents=True)
    shutil.copy(REPO / "bertscore.py", module_dir / "bertscore.py")
    shutil.copy(REPO / "bertscore.py", tmp_path / "bertscore.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_local_module_test_load_procedure(evaluate_checkout, monkeypatch):
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", "[...]")
    factory = evaluate.loading.evaluation_module_factory(os.path.join("metrics", "bertscore"), module_type="metric")
    module = importlib.import_module(factory.module_path)
    metric_class = evaluate.loading.import_main_class(module.__name__)
    parameters = inspect.signature(metric_class._compute).parameters
    assert all(p.kind != p.VAR_KEYWORD for p in parameters.values())  # no **kwargs
    assert {"predictions", "references", "model_type", "dtype", "window_stride"} <= set(parameters)
    real_load = evaluate.load

    def load_local_metric(name, *args, **kwargs):  # what evaluate's test does: evaluate.load("bertscore") → local
        if os.path.exists(name):  # a path, as the examples load this module, is loaded as it is
            return real_load(name, *args, **kwargs)
        return real_load(os.path.join("metrics", name), *args, **kwargs)

    with patch("evaluate.load", side_effect=load_local_metric):
        results = doctest.testmod(module, verbose=False, raise_on_error=True)
    assert results.failed == 0
    assert results.attempted > 1


def test_unknown_keyword_is_a_type_error_naming_it(evaluate_checkout):
    metric = evaluate.load(os.path.join("metrics", "bertscore"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_layer'"):
        metric.compute(
            predictions=["a"], references=["b"], model_type="sentence-transformers/all-MiniLM-L6-v2", num_layer=3
        )


@pytest.mark.hub
@pytest.mark.slow
def test_evaluate_load_from_a_space_on_a_local_hub(tmp_path):
    """Published as a Space (bertscore.py + README), served by olah on 127.0.0.1: evaluate.load("org/bertscore")."""
    files = {
        "bertscore.py": (REPO / "bertscore.py").read_text(encoding="utf-8"),
        "README.md": (REPO / "README.md").read_text(encoding="utf-8"),
    }
    code = (
        "import json, evaluate\n"
        # revision='main': evaluate first asks for its own version tag (v0.4.6) and falls back to main on a 404;
        # olah answers 401 for an unknown revision, which evaluate takes for a connection error.
        "m = evaluate.load('testorg/bertscore', revision='main')\n"
        "out = m.compute(predictions=['hello there'], references=[['hello here', 'hello there']],"
        " model_type='sentence-transformers/all-MiniLM-L6-v2')\n"
        "print(json.dumps({'f1': out['f1'], 'best': out['best_reference_f'], 'name': type(m).__name__}))\n"
    )
    for port in serve_dataset_repo(tmp_path, "testorg/bertscore", files, repo_type="spaces"):
        out, _ = run_python(
            code,
            {
                "HF_ENDPOINT": f"http://127.0.0.1:{port}",
                "HF_HOME": str(tmp_path / "hf"),
                "HF_EVALUATE_OFFLINE": "0",
                "HF_DATASETS_OFFLINE": "0",
            },
        )
        assert out["name"] == "BERTScore" and out["best"] == [1]
        assert_close(out["f1"][0], 1.0, prf_bounds()[2], "F1 of the matching reference")
