"""The GPU bundle (benchmarks/gpu_run.sh + benchmarks/gpu.py) runs its steps on the CPU (``--dry-run``), so it
cannot break unseen between the rare sessions that are lent a GPU."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

from paths import RATINGS, REPO


def _gpu_module():
    spec = importlib.util.spec_from_file_location("gpu_bench", REPO / "benchmarks" / "gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_past_the_file_every_text_is_new():
    pairs = [("a cat", "the cat"), ("a dog", "the dog"), ("a cat", "a bird")]
    cands, refs = _gpu_module().workload(pairs, 7)
    assert (cands[:3], refs[:3]) == ([c for c, _ in pairs], [r for _, r in pairs])
    assert cands[3:] == ["a cat (1)", "a dog (1)", "a cat (1)", "a cat (2)"]
    assert refs[6] == "the cat (2)"
    assert not set(cands[3:] + refs[3:]) & set(cands[:3] + refs[:3])


def test_dry_run_runs_every_step_and_writes_its_rows(tmp_path):
    done = subprocess.run(
        [sys.executable, "benchmarks/gpu.py", "--dry-run", "--data", str(RATINGS), "--out", str(tmp_path / "out")],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for line in ("torch:", "bert_score: 0.3.13", "cuda.matmul.fp32_precision:", "sdpa flash"):
        assert line in done.stdout, f"the environment header lacks {line!r}"
    results = json.loads((tmp_path / "out" / "gpu_results.json").read_text())
    rows = results["rows"]
    parity = [r for r in rows if r["part"] == "parity"]
    assert parity and all(r["within_bound"] and r["all_finite"] for r in parity)
    speed = [r for r in rows if r["part"] == "speed"]
    contenders = ["bert-score", "fastbertscore float32", "fastbertscore bfloat16"]
    assert sorted((r["model"], r["contender"]) for r in speed) == sorted(
        (m, c) for m in ("roberta-large", "minilm") for c in contenders
    )
    past_the_file = [r for r in speed if r["model"] == "minilm"]
    assert all(r["pairs"] == 50 and r["distinct_texts"] > 0 for r in past_the_file)
    ours = [r for r in speed if r["contender"].startswith("fastbertscore")]
    assert all(0 < r["share_of_bare"] and r["bare_encoder_tokens_per_s"] > 0 for r in ours)
    table = (tmp_path / "out" / "gpu_results.md").read_text()
    assert "measured on random weights" in table and "two-device bound" in table
