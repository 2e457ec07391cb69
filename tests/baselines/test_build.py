"""The baseline builder: deterministic, equal to a direct computation, resumable after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

import fastbertscore as fb
from fastbertscore.baselines import read_baseline
from fastbertscore.builder import build, read_corpus, sample_pairs
from tiny_models import CORPUS


def _corpus(tmp_path: Path) -> Path:
    words = " ".join(CORPUS).split()
    lines = [" ".join(words[i : i + 3 + i % 5]) for i in range(0, len(words) - 8)]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines + ["", "   ", lines[0]]) + "\n", encoding="utf-8")  # blanks and a duplicate
    return path


def test_build_is_deterministic_and_equals_a_direct_computation(tiny_model, tmp_path):
    model, corpus = tiny_model("bert"), _corpus(tmp_path)
    kwargs = dict(name="acme/tiny-bert", pairs=90, seed=3, block=40, verbose=False)
    first = build(model, "en", corpus, tmp_path / "a", **kwargs)
    second = build(model, "en", corpus, tmp_path / "b", **kwargs)
    assert first.read_bytes() == second.read_bytes()
    assert first.relative_to(tmp_path / "a").as_posix() == "en/acme/tiny-bert.tsv"

    sentences = read_corpus(corpus)
    assert len(sentences) == len(set(sentences)) and "" not in sentences
    pairs = sample_pairs(len(sentences), 90, 3)
    assert all(c != r for c, r in pairs)
    P, R, F = fb.score([sentences[c] for c, _ in pairs], [sentences[r] for _, r in pairs], model_type=model, all_layers=True, num_layers=4)
    direct = torch.stack([P, R, F], dim=-1).to(torch.float64).mean(dim=1)
    assert torch.allclose(read_baseline(first).double(), direct, atol=1e-6)

    entry = json.loads((tmp_path / "a" / "manifest.json").read_text())["files"]["en/acme/tiny-bert.tsv"]
    assert entry["source"] == "computed" and entry["pairs"] == 90 and entry["seed"] == 3
    assert entry["sentences"] == len(sentences) and entry["max_standard_error_F"] > 0


def test_killed_build_resumes_to_the_same_numbers(tiny_model, tmp_path):
    model, corpus = tiny_model("bert"), _corpus(tmp_path)
    args = ["--model", model, "--name", "acme/tiny", "--lang", "en", "--corpus", str(corpus), "--pairs", "3000",
            "--block", "50", "--seed", "1"]
    cli = [sys.executable, "-m", "fastbertscore.baseline_cli", "build"]
    reference = subprocess.run([*cli, *args, "--out", str(tmp_path / "whole")], capture_output=True, text=True, timeout=600)
    assert reference.returncode == 0, reference.stderr[-2000:]

    out = tmp_path / "killed"
    checkpoint = out / ".en__acme__tiny.tsv.checkpoint.json"
    proc = subprocess.Popen([*cli, *args, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (checkpoint.exists() and json.loads(checkpoint.read_text() or "{}").get("done", 0) >= 500):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = json.loads(checkpoint.read_text())["done"]
    assert 0 < done < 3000 and not (out / "en" / "acme" / "tiny.tsv").exists()

    resumed = subprocess.run([*cli, *args, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resuming from {checkpoint}: {done} pairs done" in resumed.stderr
    assert (out / "en/acme/tiny.tsv").read_bytes() == (tmp_path / "whole/en/acme/tiny.tsv").read_bytes()
    assert not checkpoint.exists()


def test_push_dry_run_lists_files_without_network(tmp_path, capsys):
    from fastbertscore.baseline_cli import main

    root = Path(__file__).resolve().parents[1] / "baselines"
    assert main(["push", "--repo", "acme/baselines", "--root", str(root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "add en/roberta-large.tsv" in out and "add manifest.json" in out and "add README.md" in out
