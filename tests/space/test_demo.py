"""fastbertscore.space.demo: the page is built (not served) and read like a user reads it: its endpoints and
their arguments, and the limits its labels show (read from the constants, so the two cannot disagree)."""

from __future__ import annotations

import pytest

from fastbertscore import space
from fastbertscore.space.limits import MAX_PAIRS, MAX_REFERENCES, MAX_ROWS, MAX_SAMPLES, MAX_SYSTEMS

pytest.importorskip("gradio")


@pytest.fixture(scope="module")
def demo():
    return space.build_demo()


def test_the_endpoints_and_their_arguments_are_kept(demo):
    api = demo.get_api_info()["named_endpoints"]
    names = {endpoint: [p["parameter_name"] for p in info["parameters"]] for endpoint, info in api.items()}
    shared = list(space.OPTION_NAMES)
    assert shared == ["model", "layer", "lang", "idf", "do_rescale", "dtype"]
    assert names == {
        "/score_pair": ["candidate", "references", *shared],
        "/score_file": ["file", "cand_column", "ref_columns", *shared],
        "/compare": ["ref_file", "ref_text", "system_files", "systems_text", "test", "n_samples", "seed", *shared],
        "/score": ["candidate", "reference", "model", "num_layers", "lang", "idf", "dtype"],
    }


def test_the_labels_show_the_limits(demo):
    texts = " ".join(
        str(getattr(block, "label", None) or getattr(block, "value", "") or "") for block in demo.blocks.values()
    )
    for shown in (
        f"at most {MAX_SAMPLES:,}",
        f"at most {MAX_REFERENCES} references a row",
        f"{MAX_ROWS:,} rows and {MAX_PAIRS:,} pairs",
        "at most 10 MB",
        f"2–{MAX_SYSTEMS} systems",
    ):
        assert shown in texts, shown
