"""fastbertscore.space.demo: the page is built (not served) and read like a user reads it: its endpoints and
their arguments, and the limits its labels show (read from the constants, so the two cannot disagree)."""

from __future__ import annotations

import importlib.util
import threading
import time

import pytest

from fastbertscore import space
from fastbertscore.space.limits import (
    DEADLINE_S,
    MAX_PAIRS,
    MAX_REFERENCES,
    MAX_ROWS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_SYSTEMS,
    WORK_BUDGET,
)
from fastbertscore.space.runner import BUSY, MODEL_THREAD, Job

# Found, not imported: gradio takes seconds to import, and every xdist worker collects this module while one runs it.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("gradio") is None, reason="gradio is the extra [space]")


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
        f"at most {WORK_BUDGET:,} tokens of work",
        f"stops after {DEADLINE_S} s of scoring",
        "one request at a time",
        f"Seed (0 to {MAX_SEED:,})",
        "10 MB a file and 20 MB in all",
    ):
        assert shown in texts, shown


def test_a_visitor_has_one_request_at_a_time(demo, monkeypatch):
    # A visitor could queue as many requests as Gradio's queue held (64), each in turn on the one model thread.
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    gate, started = threading.Event(), threading.Event()
    holder = MODEL_THREAD.submit(Job(lambda _: started.set() or gate.wait()))  # holds the thread: nothing races
    started.wait()
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        first = client.submit("A cat sat.", "A cat was sitting.", api_name="/score")
        deadline = time.monotonic() + 120
        while MODEL_THREAD.waiting == 0 and time.monotonic() < deadline:  # its check done, it waits for the thread
            time.sleep(0.05)
        with pytest.raises(AppError, match=f"^{BUSY}$"):
            client.predict("A dog ran.", "A dog was running.", api_name="/score")
        gate.set()
        assert 0 < first.result(timeout=120)["f1"] <= 1
        assert 0 < client.predict("A dog ran.", "A dog was running.", api_name="/score")["f1"] <= 1
    finally:
        gate.set()
        holder.result(timeout=60)
        demo.close()
